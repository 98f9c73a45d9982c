"""Durable turns: run, pause to the store, resolve, and resume exactly once.

``Turns`` is what every entry point calls — the Lambda handlers (API and
scheduled runs), the local stack, the tests. A pause commits the checkpoint, the
pending item and its outbox rows in one transaction (``signoff.durable.pausing``)
and only then enqueues the notification (best effort: the outbox is the truth).
A resolution is one conditional write carrying its audit entry
(``signoff.durable.decide``), made by every entry point through ``decide`` /
``expire`` (the decision side, ``signoff.durable.deciding``); only its winner
resumes the turn. Lifecycle announcements ride in the same commits
(``signoff.durable.announce``), and the agent's run hooks fire beside them
(``signoff.durable.run_hooks``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from signoff.durable.announce import Announcements
from signoff.durable.decide import Decisions
from signoff.durable.deciding import AgentSource, Deciding
from signoff.durable.journal import Journal
from signoff.durable.pausing import outbox_rows, pending_item, resolution_of
from signoff.durable.results import Skipped, TurnResult
from signoff.durable.run_hooks import run_finished, run_started
from signoff.durable.slots import RunCap, RunSlots, defer
from signoff.engine import Engine, Finished, Paused
from signoff.errors import NotFound, SessionBusy, SignoffError
from signoff.ids import new_id
from signoff.notify.message import NotifyMessage
from signoff.settings import LAMBDA_MAX_TIMEOUT, LEASE_MARGIN
from signoff.store.session_records import SessionRecord

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.agents import Agent
    from signoff.agents.hooks import Fired
    from signoff.clock import Clock
    from signoff.engine import Outcome, TurnState
    from signoff.messages import Message
    from signoff.models.base import ModelCall
    from signoff.queue.base import Queue
    from signoff.run_channels import RunChannel
    from signoff.store.base import Audit, ClaimFor, TurnPending, TurnSessions
    from signoff.store.pending_records import OutboxRow, PendingItem

__all__ = ["AgentSource", "Turns"]

log = logging.getLogger(__name__)

DAY = 86400.0


class Turns(Deciding):
    """Runs agent turns whose pauses survive the process, and decides their items
    (``Deciding``: ``decide``, ``resolve``, ``expire``, ``escalate``)."""

    def __init__(
        self,
        *,
        catalog: AgentSource,
        sessions: TurnSessions,
        pending: TurnPending,
        audit: Audit,
        queue: Queue,
        clock: Clock,
        model_for: Callable[[Agent], ModelCall],
        owner: str | None = None,
        # A function's turns hold their session for its timeout plus a margin (the AWS
        # wiring passes Deployment.lease_seconds); unknown, Lambda's longest.
        lease_ttl: float = LAMBDA_MAX_TIMEOUT + LEASE_MARGIN,
        retention: float = 30 * DAY,
        deadline_margin: float = 0.0,
        run_slots: RunSlots | None = None,
    ) -> None:
        self.catalog = catalog
        self.sessions = sessions
        self.pending = pending
        self.audit = audit
        self.queue = queue
        self.clock = clock
        self.model_for = model_for
        self.owner = owner or new_id()
        self.lease_ttl = lease_ttl
        self.retention = retention
        self.deadline_margin = deadline_margin
        # at most this many turns execute at once (signoff.durable.slots); none: no cap
        self.run_slots = run_slots or RunSlots(None, RunCap(), clock=clock)
        self._engines: dict[str, Engine] = {}
        self.decisions = Decisions(pending=pending, audit=audit, clock=clock, retention=retention)
        self.announcements = Announcements(clock=clock, retention=retention)

    # -- entry points ------------------------------------------------------------------

    def send(
        self,
        agent_name: str,
        message: str,
        *,
        tenant: str,
        environment: str,
        session_id: str | None = None,
        deadline: float | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        channel: RunChannel | None = None,
    ) -> TurnResult:
        """Run one user message on a session (a new one unless ``session_id``).

        ``on_event`` sees each event's wire form as the engine emits it (a streaming
        transport); the events are committed with the turn's checkpoints regardless.
        ``channel`` is what the run is on (``signoff.run_channels``): it decides, for
        the run and its resumes, whether its start and finish are announced.

        Raises:
            UnknownAgent: no such agent.
            NotFound: the session belongs to another agent or tenant.
            SessionBusy: a turn is running on the session, or it waits on a decision.
        """
        agent = self.catalog.get(agent_name)
        session_id = session_id or new_id()
        existing = self.sessions.load(session_id)
        if existing is not None and (existing.agent != agent.name or existing.tenant != tenant):
            raise NotFound("session", session_id)
        now = self.clock.now().timestamp()
        first_seq = int(now * 1000)
        fresh = SessionRecord(
            session_id=session_id,
            agent=agent.name,
            tenant=tenant,
            environment=environment,
            first_seq=first_seq,
            next_seq=first_seq,
            run_start_seq=first_seq,
            event_count=0,
            expires_at=now + self.retention,
        )
        record = self._claim(fresh, "message")
        # Without a slot in time the message is kept and the turn yields at once: its
        # commit makes it a running turn that a continuation or the sweeper runs on.
        with self.run_slots.hold(tenant, lease=self.lease_ttl, deadline=deadline) as slot:
            deadline = deadline if slot else self.clock.monotonic()
            history, _ = self._history(record, run_from=record.next_seq)
            journal = self._journal(record, history, [], on_event=on_event)
            run_id = new_id()
            journal.announce(
                self.announcements.run_start(agent, record, run_id, "message", channel=channel)
            )
            started = run_started(agent, record, run_id, "message", channel)
            before = len(history)
            try:
                outcome = self._engine(agent).start(
                    history=history,
                    message=message,
                    tenant=tenant,
                    environment=environment,
                    session_id=session_id,
                    run_id=run_id,
                    sink=journal.event,
                    deadline=deadline,
                    checkpoint=journal.step,
                    channel=channel,
                )
            except Exception as failure:
                if journal.record.state is None:
                    # Nothing committed yet, so nothing to re-drive: log the failure and
                    # free the session, or it would stay "running" and refuse every message.
                    journal.abandon(history[:before], existing, failure)
                raise
            return self._settle(agent, journal, outcome, history, started=started)

    def resume(self, item: PendingItem, *, deadline: float | None = None) -> TurnResult:
        """Continue the turn of a resolved item (also the sweeper's re-drive of one).

        Raises:
            SessionBusy: the session is not paused on this item (already resumed).
        """
        agent = self.catalog.get(item.agent)
        record = self._claim(self._placeholder(item), "resume", pending_id=item.id)
        with self.run_slots.hold(item.tenant, lease=self.lease_ttl, deadline=deadline) as slot:
            if not slot:
                return defer(self.sessions, record, self.owner, self.clock)
            return self._resume_claimed(agent, item, record, deadline)

    def _resume_claimed(
        self, agent: Agent, item: PendingItem, record: SessionRecord, deadline: float | None
    ) -> TurnResult:
        """Apply ``item``'s resolution to the checkpoint of a session claimed for it."""
        # Claimed: from here the session's lease guards the turn (a death is re-driven
        # from the checkpoint), so the item owes nothing more and leaves the sweep.
        self.pending.mark_resumed(item.id)
        history, run_events = self._history(record, run_from=record.run_start_seq)
        state = self._state(record)
        journal = self._journal(record, history, run_events)
        journal.announce(
            self.announcements.run_start(
                agent,
                record,
                state.run_id,
                "resolution",
                channel=state.channel,
                pending_id=item.id,
            )
        )
        # The resume is this process's part of the run: its start and, if it gets
        # there, its finish fire here (the pause fired nothing).
        started = run_started(agent, record, state.run_id, "resolution", state.channel)
        outcome = self._engine(agent).resume(
            state,
            history,
            resolution_of(item),
            sink=journal.event,
            deadline=deadline,
            checkpoint=journal.step,
        )
        return self._settle(agent, journal, outcome, history, started=started)

    def proceed(self, session_id: str, *, deadline: float | None = None) -> TurnResult | Skipped:
        """Continue whatever a session's turn waits for.

        A turn that yielded before its deadline or whose process died is re-driven;
        a turn paused on an item that was resolved (a click acknowledged before the
        resume, e.g. from Slack), or whose resume died before its first commit, is
        resumed. Anything else is ``Skipped``, logged and not an error: a
        continuation is delivered at least once (Lambda retries an invocation that
        raised), and a session that waits on a person, is finished, or whose turn
        another live process runs (its holder commits or yields the turn itself,
        and if it dies its lease runs out and the sweeper re-drives) has nothing
        for a retry to do.

        Raises:
            NotFound: no such session.
        """
        record = self.sessions.load(session_id)
        if record is None:
            raise NotFound("session", session_id)
        agent = self.catalog.get(record.agent)
        resolved = self._resolved_pause(record)
        # Only the claims may be refused: a refusal names the session's status as
        # it was then, so a race with another continuation or the sweeper ends in
        # the same no-op.
        try:
            if resolved is not None:
                claimed = self._claim(record, "resume", pending_id=resolved.id)
            else:
                claimed = self._claim(record, "redrive")
        except SessionBusy as busy:
            return self._skip(record, busy)
        with self.run_slots.hold(record.tenant, lease=self.lease_ttl, deadline=deadline) as slot:
            if not slot:
                return defer(self.sessions, claimed, self.owner, self.clock)
            if resolved is not None:
                return self._resume_claimed(agent, resolved, claimed, deadline)
            return self._redrive(agent, claimed, deadline)

    def _resolved_pause(self, record: SessionRecord) -> PendingItem | None:
        """The item a paused session waits on, once it is resolved (the turn may resume)."""
        if record.status != "paused" or not record.pending_id:
            return None
        item = self.pending.get(record.pending_id)
        return item if item is not None and item.status != "pending" else None

    def _redrive(self, agent: Agent, record: SessionRecord, deadline: float | None) -> TurnResult:
        """Continue the checkpoint of a session claimed for a re-drive."""
        state = self._state(record)
        if state.awaiting_call is not None and state.pending_id is not None:
            # A resume died before its first commit: the checkpoint still waits on
            # the call, whose resolution is stored. Re-drive the resume, or the call
            # would be left without its result.
            item = self.pending.get(state.pending_id)
            if item is not None and item.status != "pending":
                return self._resume_claimed(agent, item, record, deadline)
        history, run_events = self._history(record, run_from=record.run_start_seq)
        journal = self._journal(record, history, run_events)
        outcome = self._engine(agent).proceed(
            state,
            history,
            sink=journal.event,
            deadline=deadline,
            checkpoint=journal.step,
        )
        return self._settle(agent, journal, outcome, history)

    def _skip(self, record: SessionRecord, busy: SessionBusy) -> Skipped:
        skipped = Skipped(
            session_id=record.session_id,
            agent=record.agent,
            session_status=busy.status,
            pending_id=busy.pending_id,
        )
        log.info(
            "continuation skipped: session %s is %s",
            skipped.session_id,
            skipped.session_status,
            extra={
                "session_id": skipped.session_id,
                "agent": skipped.agent,
                "session_status": skipped.session_status,
                "pending_id": skipped.pending_id,
            },
        )
        return skipped

    # -- the pieces ----------------------------------------------------------------------

    def _engine(self, agent: Agent) -> Engine:
        if agent.name not in self._engines:
            self._engines[agent.name] = Engine(
                agent=agent,
                model=self.model_for(agent),
                clock=self.clock,
                deadline_margin=self.deadline_margin,
                max_tokens=agent.config.model.max_tokens,
            )
        return self._engines[agent.name]

    def _claim(
        self, record: SessionRecord, purpose: ClaimFor, *, pending_id: str | None = None
    ) -> SessionRecord:
        now = self.clock.now().timestamp()
        claimed = self.sessions.claim(
            record,
            purpose=purpose,
            owner=self.owner,
            until=now + self.lease_ttl,
            now=now,
            pending_id=pending_id,
        )
        if purpose == "message":
            claimed = claimed.model_copy(update={"run_start_seq": claimed.next_seq})
        return claimed

    def _placeholder(self, item: PendingItem) -> SessionRecord:
        return SessionRecord(
            session_id=item.session_id,
            agent=item.agent,
            tenant=item.tenant,
            environment=item.environment,
        )

    def _history(
        self, record: SessionRecord, *, run_from: int
    ) -> tuple[list[Message], list[dict[str, Any]]]:
        """The conversation so far, and the events of the current turn."""
        messages: list[Message] = []
        events: list[dict[str, Any]] = []
        for chunk in self.sessions.read_log(record.session_id, from_seq=record.first_seq):
            messages.extend(chunk.messages)
            if chunk.seq >= run_from:
                events.extend(chunk.events)
        return messages, events

    def _state(self, record: SessionRecord) -> TurnState:
        if record.state is None:
            raise SessionBusy(record.session_id, status=record.status)
        return record.state

    def _journal(
        self,
        record: SessionRecord,
        history: list[Message],
        run_events: list[dict[str, Any]],
        *,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> Journal:
        return Journal(
            sessions=self.sessions,
            record=record,
            owner=self.owner,
            clock=self.clock,
            lease_ttl=self.lease_ttl,
            history_length=len(history),
            run_events=run_events,
            on_commit=self._enqueue,
            on_event=on_event,
        )

    def _settle(
        self,
        agent: Agent,
        journal: Journal,
        outcome: Outcome,
        history: list[Message],
        *,
        started: Fired | None = None,
    ) -> TurnResult:
        """Make the outcome durable and describe it; give the run hooks their time."""
        try:
            result = self._commit(agent, journal, outcome, history)
        finally:
            if started is not None:
                started.wait()
        if isinstance(outcome, Finished):
            # After the commit, as the run_finish rows (nothing is announced that did
            # not happen), and after the start's hook had its time, so a run's start
            # is told before its finish. A hook's failure is its own, never the turn's.
            finished = run_finished(agent, journal.record, outcome)
            if finished is not None:
                finished.wait()
        return result

    def _commit(
        self, agent: Agent, journal: Journal, outcome: Outcome, history: list[Message]
    ) -> TurnResult:
        record = journal.record
        now = self.clock.now().timestamp()
        session_id, name = record.session_id, agent.name
        if isinstance(outcome, Finished):
            journal.commit(
                None,
                history,
                status="done",
                release=True,
                text=outcome.text,
                stop_reason=outcome.stop_reason,
                outbox=self.announcements.run_finish(agent, record, outcome, now),
            )
            return TurnResult(
                status="finished",
                events=journal.run_events,
                text=outcome.text,
                stop_reason=outcome.stop_reason,
                session_id=session_id,
                agent=name,
            )
        if isinstance(outcome, Paused):
            item = pending_item(
                agent, outcome.state, outcome.pending, now, history, policy=outcome.policy
            )
            journal.commit(
                outcome.state,
                history,
                status="paused",
                release=True,
                pending=item,
                outbox=outbox_rows(item, now),
            )
            return TurnResult(
                status="paused",
                events=journal.run_events,
                pending=item,
                session_id=session_id,
                agent=name,
            )
        journal.commit(outcome.state, history, status="running", release=True)
        return TurnResult(
            status="running", events=journal.run_events, session_id=session_id, agent=name
        )

    def _enqueue(self, record: SessionRecord, rows: list[OutboxRow]) -> None:
        """Tell the notifier about committed rows: one message per subject."""
        for subject in dict.fromkeys(row.subject for row in rows):
            try:
                self.queue.send(NotifyMessage.of(subject, record.session_id).wire())
            except SignoffError:
                # The outbox rows are committed; the sweeper re-enqueues what was never sent.
                log.warning("enqueue failed after a commit; the sweeper re-sends", exc_info=True)
