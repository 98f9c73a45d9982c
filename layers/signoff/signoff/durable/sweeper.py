"""The sweeper: what was committed but never finished gets finished, reading only what is due.

A sweep is a set of tasks (``plan``): one per job and shard of the store's sweep
index (docs/scale.md), and one for items the previous release indexed. Deployed,
the sweeper function plans every minute and a worker function drains the tasks
from a queue in parallel (``run``); ``sweep`` runs them all here (tests, the CLI).
Each task reads its shard's entries due by now, page by page, until its
deadline; what is left is due at the next sweep. Every action is one
conditional write, so two workers on one shard handle each item once.

- ``send``: outbox rows committed but unsent after a grace period (the process
  died between the commit and the enqueue, or every retry so far failed) are
  enqueued again; the notifier's send lock makes a duplicate harmless.
- ``retry``: rows that failed permanently and whose slow retry is due
  (``retry_at``, set by the notifier's ``RetrySchedule``) are made sendable
  again, one conditional write each, and enqueued with the same idempotency key.
- ``due``: each pending item is due at the earliest of its expiry, its next
  escalation step and its next ``stuck`` reminder. Past ``expiresAt`` it becomes
  ``expired`` through ``Turns.expire`` and its turn resumes as denied; a due
  step of its ladder notifies its channels once, under its own subject, and the
  final ``then`` decides the item once (``signoff.durable.escalation``); a due
  reminder goes to the channels whose ``notify`` lists ``stuck`` (rows first,
  under a subject numbered by the reminder, then the count, which moves the
  item's due time). A resolved item whose turn nobody resumed (its process died
  after the decision) is resumed.
- ``stalled``: turns whose lease ran out (their process died, or a turn that
  yielded was never continued) are re-driven from their checkpoint; if the
  agent wants ``stuck``, its channels hear once per run that it stalled. It is
  a job of its own, so no number of due items can starve it.
- ``legacy``: items still carrying the previous release's index keys get this
  release's (``signoff.store.migrate``), so the other jobs find them.

It drives ``Turns`` (expire, re-drive), so it sits in ``signoff.durable`` above
the notifications it writes (``signoff.notify.lifecycle``), not beside them.
"""

import logging
import threading
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from signoff.channels.subject import Subject
from signoff.durable.escalation import Escalator
from signoff.durable.results import Skipped
from signoff.durable.sweep_plan import JOBS, Job, task_bodies
from signoff.errors import AlreadyResolved, NotFound, SessionBusy, SignoffError, UsageError
from signoff.notify import lifecycle
from signoff.notify.message import NotifyMessage
from signoff.store.codec import next_due
from signoff.store.keys import Shards

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.clock import Clock
    from signoff.durable.turns import Turns
    from signoff.queue.base import Queue
    from signoff.store.base import PendingReader, StalledSessions, SweeperOutbox, SweptPending
    from signoff.store.migrate import Migrator
    from signoff.store.pending_records import OutboxRow, PendingItem
    from signoff.store.session_records import SessionRecord

__all__ = ["JOBS", "SweepReport", "SweepTask", "Sweeper", "session_of"]


class SweepTask(BaseModel):
    """One task of a sweep: a job over one shard, as the sweep queue carries it."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    job: Job
    shard: int = Field(default=0, ge=0)


log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class SweepReport:
    """What one sweep did, by pending id, subject or session id.

    ``reminded`` lists the subjects of the ``stuck`` notifications this sweep
    wrote: reminders (``stuck:…``) and stalled runs (``stalled:…``). ``escalated``
    lists the escalation steps taken (``Subject.escalate``'s text) and the items
    their ladder's final step decided (``<pendingId>:<approve|deny>``).
    """

    requeued: list[str] = field(default_factory=list)
    retried: list[str] = field(default_factory=list)  # ``<subject>/<channel>``
    expired: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    reminded: list[str] = field(default_factory=list)
    redriven: list[str] = field(default_factory=list)
    escalated: list[str] = field(default_factory=list)
    # items given this release's keys (``<pk>/<sk>``), by the ``legacy`` task
    rewritten: list[str] = field(default_factory=list)

    def add(self, other: "SweepReport") -> None:
        """Append what ``other`` (another task of the same sweep) did."""
        for name in (f.name for f in fields(self)):
            getattr(self, name).extend(getattr(other, name))


def session_of(row: "OutboxRow", pending: "PendingReader") -> str | None:
    """The session a row's queue message names; None when its pending item is gone."""
    if row.notification is not None:
        return str(row.notification.get("sessionId", ""))
    pending_id = row.subject.composed_from
    item = None if pending_id is None else pending.get(pending_id)
    return None if item is None else item.session_id


class Sweeper:
    """Sweeps over the store, task by task; safe to run twice at once, and its tasks
    side by side on threads.

    Agents are the ones ``turns`` runs on, and ``sessions`` (their stalled listing)
    the store ``turns`` runs over, so a re-drive sees exactly what the turn would.
    ``shards`` is the store's sweep shard count; ``migrator`` moves what the
    previous release indexed (None: no ``legacy`` task).
    """

    def __init__(
        self,
        *,
        turns: "Turns",
        sessions: "StalledSessions",
        pending: "SweptPending",
        outbox: "SweeperOutbox",
        queue: "Queue",
        clock: "Clock",
        grace: float = 60.0,
        shards: int = Shards().sweep,
        migrator: "Migrator | None" = None,
    ) -> None:
        self.turns = turns
        self.sessions = sessions
        self.pending = pending
        self.outbox = outbox
        self.queue = queue
        self.clock = clock
        self.grace = grace
        self.shards = shards
        self.migrator = migrator
        self.escalator = Escalator(
            turns=turns, pending=pending, outbox=outbox, enqueue=self._enqueue
        )
        # each task's own reading of the agents' configs: tasks run side by side
        self._task = threading.local()

    def plan(self) -> list[SweepTask]:
        """Every task of one sweep: each job on each shard, and the legacy keys' move."""
        bodies = task_bodies(self.shards, legacy=self.migrator is not None)
        return [SweepTask.model_validate(body) for body in bodies]

    def sweep(self, *, deadline: float | None = None) -> SweepReport:
        """Run every task of a sweep here, in turn; ``deadline`` (monotonic) bounds them."""
        report = SweepReport()
        for task in self.plan():
            report.add(self.run(task, deadline=deadline))
        return report

    def run(self, task: SweepTask, *, deadline: float | None = None) -> SweepReport:
        """Drain one task: its shard's entries due now, until ``deadline`` (monotonic).

        Raises:
            UsageError: the task's shard is not one of this sweep's.
        """
        report = SweepReport()
        if task.job != "legacy" and task.shard >= self.shards:
            raise UsageError(f"shard {task.shard} of {self.shards}: not a shard of this sweep")
        self._task.agents = {}  # an agent's config is read afresh by each task
        match task.job:
            case "send":
                self._requeue(task.shard, report, deadline)
            case "retry":
                self._retry_failed(task.shard, report, deadline)
            case "due":
                self._due(task.shard, report, deadline)
            case "stalled":
                self._redrive(task.shard, report, deadline)
            case "legacy":
                self._legacy(report, deadline)
        return report

    def _late(self, deadline: float | None) -> bool:
        return deadline is not None and self.clock.monotonic() >= deadline

    # -- re-enqueue what was never sent ---------------------------------------------------

    def _requeue(self, shard: int, report: SweepReport, deadline: float | None) -> None:
        now = self.clock.now().timestamp()
        seen: set[str] = set()
        for row in self.outbox.unsent_in(shard, now - self.grace):
            if self._late(deadline):
                return
            if row.pending_id in seen:
                continue  # one message per subject sends every channel's row
            seen.add(row.pending_id)
            session_id = self._session_of(row)
            if session_id is None:
                continue
            self._enqueue(row.subject, session_id)
            report.requeued.append(row.pending_id)

    # -- retry permanent failures on their slow schedule -----------------------------------

    def _retry_failed(self, shard: int, report: SweepReport, deadline: float | None) -> None:
        now = self.clock.now().timestamp()
        subjects: dict[Subject, str] = {}
        for row in self.outbox.retries_due_in(shard, now):
            if self._late(deadline):
                break
            session_id = self._session_of(row)
            if session_id is None:
                continue  # its pending item is gone: nothing to compose it from
            # The conditional write: of two sweeps, one makes it sendable again.
            if self.outbox.redrive(row.pending_id, row.channel, now=now, due_only=True):
                subjects[row.subject] = session_id
                report.retried.append(f"{row.pending_id}/{row.channel}")
        for subject, session_id in subjects.items():
            self._enqueue(subject, session_id)

    def _session_of(self, row: "OutboxRow") -> str | None:
        return session_of(row, self.pending)

    # -- what is due on pending items -------------------------------------------------------

    def _due(self, shard: int, report: SweepReport, deadline: float | None) -> None:
        now = self.clock.now().timestamp()
        for item in self.pending.due_in(shard, now):
            if self._late(deadline):
                return
            if item.status != "pending":
                if not item.resumed:
                    self._resume_owed(item, report, deadline)
                continue
            if item.expires_at <= now:
                self._expire(item, report, deadline)
                continue
            climbed = self._escalate(item, now, report, deadline)
            if climbed is not None:
                self._remind(climbed, now, report)

    def _expire(self, item: "PendingItem", report: SweepReport, deadline: float | None) -> None:
        try:
            decided = self.turns.expire(item, deadline=deadline)
        except (AlreadyResolved, NotFound):
            return  # another sweep, or a last-second click, got there first
        report.expired.append(decided.item.id)
        if decided.result is not None:
            report.resumed.append(decided.item.id)

    def _escalate(
        self, item: "PendingItem", now: float, report: SweepReport, deadline: float | None
    ) -> "PendingItem | None":
        """Climb the item's ladder as far as is due: the item as the steps left it, or
        None when the ladder's end decided it (or another sweep is climbing it)."""
        if item.policy is None or not item.policy.escalate:
            return item
        climb = self.escalator.climb(item, now, deadline=deadline)
        report.escalated += climb.steps
        if climb.decided is None:
            return climb.item
        decided = climb.decided.item
        report.escalated.append(f"{decided.id}:{decided.status}")
        if climb.decided.result is not None:
            report.resumed.append(decided.id)
        return None

    def _resume_owed(
        self, item: "PendingItem", report: SweepReport, deadline: float | None
    ) -> None:
        """Resume the turn of a decided item whose deciding process died before it could."""
        try:
            result = self.turns.proceed(item.session_id, deadline=deadline)
        except NotFound:
            result = None  # the session is gone: nothing to resume
        except SignoffError:
            log.warning("could not resume the turn of %s yet", item.id, exc_info=True)
            return  # still due: the next sweep tries again
        if result is None or isinstance(result, Skipped):
            # another process resumed it, or it waits on something else now
            try:
                self.pending.mark_resumed(item.id)
            except NotFound:
                return
        else:
            report.resumed.append(item.id)

    # -- remind about what still waits ----------------------------------------------------

    def _remind(self, current: "PendingItem", now: float, report: SweepReport) -> None:
        # fixed at the pause (None: its agent wanted no reminders then)
        interval = current.remind_after
        since = current.reminded_at if current.reminded_at is not None else current.requested_at
        if interval is None or since + interval > now:
            if next_due(current) <= now:
                # due by its key but nothing is: a key written early; place it right
                self.pending.reindex(current)
            return
        agent = self._agent(current.agent)
        channels = [] if agent is None else lifecycle.subscribers(agent.config.notify, "stuck")
        if channels:
            self._send_reminder(current, channels, now, report)
        else:
            # nobody to tell (the agent changed, or is gone): count it, so the item
            # is due again one interval on instead of at every sweep
            self.pending.note_reminder(current.id, current.reminders, now=now, item=current)

    def _send_reminder(
        self, item: "PendingItem", channels: list[str], now: float, report: SweepReport
    ) -> None:
        number = item.reminders + 1
        subject = Subject.stuck(item.id, number)
        note = lifecycle.still_waiting(item, number, now)
        rows = lifecycle.rows(
            subject, note, channels, now=now, retain_until=now + self.turns.retention
        )
        # Rows first: whoever writes them enqueues; a sweep that finds them written
        # (a concurrent sweep, or one that died before counting) only counts.
        if self.outbox.add(rows):
            self._enqueue(subject, item.session_id)
            report.reminded.append(str(subject))
        self.pending.note_reminder(item.id, item.reminders, now=now, item=item)

    # -- re-drive turns whose process died ------------------------------------------------

    def _redrive(self, shard: int, report: SweepReport, deadline: float | None) -> None:
        now = self.clock.now().timestamp()
        # The grace keeps the sweeper off a turn whose continuation is on its way.
        for session in self.sessions.stalled_in(shard, now - self.grace):
            if self._late(deadline):
                return
            agent = self._agent(session.agent)
            if agent is not None:
                self._announce_stall(agent, session, now, report)
            try:
                result = self.turns.proceed(session.session_id, deadline=deadline)
            except SessionBusy:
                continue  # the claimed checkpoint was gone: nothing to continue
            except SignoffError:
                log.warning("could not re-drive session %s", session.session_id, exc_info=True)
                continue
            if isinstance(result, Skipped):
                continue  # another sweep, or the turn's own continuation, took it
            report.redriven.append(session.session_id)

    # -- the previous release's keys --------------------------------------------------------

    def _legacy(self, report: SweepReport, deadline: float | None) -> None:
        if self.migrator is None:
            return
        for item in self.migrator.items():
            if self._late(deadline):
                return
            if self.migrator.rewrite(item):
                report.rewritten.append(f"{item['pk']}/{item['sk']}")

    def _announce_stall(
        self, agent: "Agent", session: "SessionRecord", now: float, report: SweepReport
    ) -> None:
        channels = lifecycle.subscribers(agent.config.notify, "stuck")
        if not channels or session.state is None:
            return
        run_id = session.state.run_id
        since = session.lease_until if session.lease_until is not None else session.updated_at
        subject = Subject.stalled(session.session_id, run_id)
        note = lifecycle.stalled(session, run_id, since, now)
        rows = lifecycle.rows(
            subject, note, channels, now=now, retain_until=now + self.turns.retention
        )
        # Once per run: a run that stalls again keeps its subject, and add refuses it.
        if self.outbox.add(rows):
            self._enqueue(subject, session.session_id)
            report.reminded.append(str(subject))

    # -- shared ---------------------------------------------------------------------------

    def _agent(self, name: str) -> "Agent | None":
        """The agent named ``name``, or None when the deployment no longer has it."""
        seen: dict[str, Agent | None] = self._task.__dict__.setdefault("agents", {})
        if name not in seen:
            try:
                seen[name] = self.turns.catalog.get(name)
            except SignoffError:
                log.warning("agent %s is gone; its items get no reminders", name)
                seen[name] = None
        return seen[name]

    def _enqueue(self, subject: Subject, session_id: str) -> None:
        try:
            self.queue.send(NotifyMessage.of(subject, session_id).wire())
        except SignoffError:
            # The rows are written; the next sweep's requeue sends them.
            log.warning("enqueue of %s failed; the next sweep re-sends", subject, exc_info=True)
