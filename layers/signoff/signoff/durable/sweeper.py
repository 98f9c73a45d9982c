"""The sweeper (every minute): what was committed but never finished gets finished.

- Outbox rows committed but unsent after a grace period (the process died
  between the commit and the enqueue, or every retry so far failed) are
  enqueued again; the notifier's send lock makes a duplicate harmless.
- Rows that failed permanently and whose slow retry is due (``retry_at``, set
  by the notifier's ``RetrySchedule``) are made sendable again, one conditional
  write each so two sweeps retry a row once, and enqueued: the notifier sends
  them with the same idempotency key. Past the last retry a row stays failed.
- Pending items past ``expiresAt`` become ``expired`` through ``Turns.expire``
  (one conditional write with its audit entry, so two sweeps never expire one
  twice) and their turns resume as denied with the reason "expired".
- Items whose approval policy has an escalation ladder climb it: each step that
  fell due notifies its channels once, under its own subject, and the final
  ``then`` decides the item once, audited as ``escalation``
  (``signoff.durable.escalation``).
- Items waiting longer than their agent's ``remindAfter`` get a ``stuck``
  reminder on the channels whose ``notify`` lists ``stuck``, once per interval.
  The rows are written first under a subject numbered by the reminder
  (``stuck:<pendingId>:<n>``), then the count moves by a conditional write:
  two sweeps write the same subject, so one reminder goes out; a sweep that
  died between the two writes is finished by the next one.
- Turns whose lease ran out (their process died, or a turn that yielded was
  never continued) are re-driven from their checkpoint; if the agent wants
  ``stuck``, its channels hear once per run that it stalled.

It drives ``Turns`` (expire, re-drive), so it sits in ``signoff.durable`` above
the notifications it writes (``signoff.notify.lifecycle``), not beside them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from signoff.durable.escalation import Escalator
from signoff.durable.results import Skipped
from signoff.errors import AlreadyResolved, NotFound, SessionBusy, SignoffError
from signoff.notify import lifecycle

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.clock import Clock
    from signoff.durable.turns import Turns
    from signoff.queue.base import Queue
    from signoff.store.base import Outbox, PendingItems
    from signoff.store.records import OutboxRow, PendingItem, SessionRecord

__all__ = ["SweepReport", "Sweeper", "session_of"]

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class SweepReport:
    """What one sweep did, by pending id, subject or session id.

    ``reminded`` lists the subjects of the ``stuck`` notifications this sweep
    wrote: reminders (``stuck:…``) and stalled runs (``stalled:…``). ``escalated``
    lists the escalation steps taken (``escalate:<pendingId>:<n>``) and the items
    their ladder's final step decided (``<pendingId>:<approve|deny>``).
    """

    requeued: list[str] = field(default_factory=list)
    retried: list[str] = field(default_factory=list)  # ``<subject>/<channel>``
    expired: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    reminded: list[str] = field(default_factory=list)
    redriven: list[str] = field(default_factory=list)
    escalated: list[str] = field(default_factory=list)


def session_of(row: OutboxRow, pending: PendingItems) -> str | None:
    """The session a row's queue message names; None when its pending item is gone."""
    if row.notification is not None:
        return str(row.notification.get("sessionId", ""))
    item = pending.get(lifecycle.item_of(row.pending_id))
    return None if item is None else item.session_id


class Sweeper:
    """One sweep over the store; safe to run twice at once.

    Sessions and agents are the ones ``turns`` runs on, so a re-drive sees
    exactly what the turn would.
    """

    def __init__(
        self,
        *,
        turns: Turns,
        pending: PendingItems,
        outbox: Outbox,
        queue: Queue,
        clock: Clock,
        grace: float = 60.0,
        batch: int = 100,
    ) -> None:
        self.turns = turns
        self.pending = pending
        self.outbox = outbox
        self.queue = queue
        self.clock = clock
        self.grace = grace
        self.batch = batch
        self.escalator = Escalator(
            turns=turns, pending=pending, outbox=outbox, enqueue=self._enqueue
        )

    def sweep(self, *, deadline: float | None = None) -> SweepReport:
        """Run every job once; ``deadline`` (monotonic) bounds the turns it continues."""
        report = SweepReport()
        self._requeue(report)
        self._retry_failed(report)
        self._expire(report, deadline)
        self._escalate(report, deadline)
        self._remind(report)
        self._redrive(report, deadline)
        return report

    # -- re-enqueue what was never sent ---------------------------------------------------

    def _requeue(self, report: SweepReport) -> None:
        now = self.clock.now().timestamp()
        rows = self.outbox.unsent(created_before=now - self.grace, limit=self.batch)
        for subject, row in {row.pending_id: row for row in rows}.items():
            session_id = self._session_of(row)
            if session_id is None:
                continue
            self.queue.send({"pendingId": subject, "sessionId": session_id})
            report.requeued.append(subject)

    # -- retry permanent failures on their slow schedule -----------------------------------

    def _retry_failed(self, report: SweepReport) -> None:
        now = self.clock.now().timestamp()
        subjects: dict[str, str] = {}
        for row in self.outbox.retries_due(now, limit=self.batch):
            session_id = self._session_of(row)
            if session_id is None:
                continue  # its pending item is gone: nothing to compose it from
            # The conditional write: of two sweeps, one makes it sendable again.
            if self.outbox.redrive(row.pending_id, row.channel, now=now, due_only=True):
                subjects[row.pending_id] = session_id
                report.retried.append(f"{row.pending_id}/{row.channel}")
        for subject, session_id in subjects.items():
            self._enqueue(subject, session_id)

    def _session_of(self, row: OutboxRow) -> str | None:
        return session_of(row, self.pending)

    # -- expire what nobody decided in time -----------------------------------------------

    def _expire(self, report: SweepReport, deadline: float | None) -> None:
        now = self.clock.now().timestamp()
        for item in self.pending.due(now, limit=self.batch):
            try:
                decided = self.turns.expire(item, deadline=deadline)
            except (AlreadyResolved, NotFound):
                continue  # another sweep, or a last-second click, got there first
            report.expired.append(decided.item.id)
            if decided.result is not None:
                report.resumed.append(decided.item.id)

    # -- climb escalation ladders ---------------------------------------------------------

    def _escalate(self, report: SweepReport, deadline: float | None) -> None:
        now = self.clock.now().timestamp()
        for item in self.pending.waiting(now):
            if len(report.escalated) >= self.batch:
                return  # the rest are as due at the next sweep
            if item.policy is None or not item.policy.escalate:
                continue
            climb = self.escalator.climb(item, now, deadline=deadline)
            report.escalated += climb.steps
            if climb.decided is not None:
                decided = climb.decided.item
                report.escalated.append(f"{decided.id}:{decided.status}")
                if climb.decided.result is not None:
                    report.resumed.append(decided.id)

    # -- remind about what still waits ----------------------------------------------------

    def _remind(self, report: SweepReport) -> None:
        now = self.clock.now().timestamp()
        agents: dict[str, Agent | None] = {}
        for item in self.pending.waiting(now):
            if len(report.reminded) >= self.batch:
                return  # the rest are as due at the next sweep
            agent = self._agent(item.agent, agents)
            if agent is None or agent.config.remind_after is None:
                continue
            channels = lifecycle.subscribers(agent.config.notify, "stuck")
            # once per interval: counted from the last reminder, or from the request
            since = item.reminded_at if item.reminded_at is not None else item.requested_at
            if not channels or since + agent.config.remind_after > now:
                continue
            self._send_reminder(item, channels, now, report)

    def _send_reminder(
        self, item: PendingItem, channels: list[str], now: float, report: SweepReport
    ) -> None:
        number = item.reminders + 1
        subject = lifecycle.stuck_subject(item.id, number)
        note = lifecycle.still_waiting(item, number, now)
        rows = lifecycle.rows(
            subject, note, channels, now=now, retain_until=now + self.turns.retention
        )
        # Rows first: whoever writes them enqueues; a sweep that finds them written
        # (a concurrent sweep, or one that died before counting) only counts.
        if self.outbox.add(rows):
            self._enqueue(subject, item.session_id)
            report.reminded.append(subject)
        self.pending.note_reminder(item.id, item.reminders, now=now)

    # -- re-drive turns whose process died ------------------------------------------------

    def _redrive(self, report: SweepReport, deadline: float | None) -> None:
        now = self.clock.now().timestamp()
        agents: dict[str, Agent | None] = {}
        # The grace keeps the sweeper off a turn whose continuation is on its way.
        for session in self.turns.sessions.stalled(now - self.grace, limit=self.batch):
            agent = self._agent(session.agent, agents)
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

    def _announce_stall(
        self, agent: Agent, session: SessionRecord, now: float, report: SweepReport
    ) -> None:
        channels = lifecycle.subscribers(agent.config.notify, "stuck")
        if not channels or session.state is None:
            return
        run_id = session.state.run_id
        since = session.lease_until if session.lease_until is not None else session.updated_at
        subject = lifecycle.stalled_subject(session.session_id, run_id)
        note = lifecycle.stalled(session, run_id, since, now)
        rows = lifecycle.rows(
            subject, note, channels, now=now, retain_until=now + self.turns.retention
        )
        # Once per run: a run that stalls again keeps its subject, and add refuses it.
        if self.outbox.add(rows):
            self._enqueue(subject, session.session_id)
            report.reminded.append(subject)

    # -- shared ---------------------------------------------------------------------------

    def _agent(self, name: str, seen: dict[str, Agent | None]) -> Agent | None:
        """The agent named ``name``, or None when the deployment no longer has it."""
        if name not in seen:
            try:
                seen[name] = self.turns.catalog.get(name)
            except SignoffError:
                log.warning("agent %s is gone; its items get no reminders", name)
                seen[name] = None
        return seen[name]

    def _enqueue(self, subject: str, session_id: str) -> None:
        try:
            self.queue.send({"pendingId": subject, "sessionId": session_id})
        except SignoffError:
            # The rows are written; the next sweep's requeue sends them.
            log.warning("enqueue of %s failed; the next sweep re-sends", subject, exc_info=True)
