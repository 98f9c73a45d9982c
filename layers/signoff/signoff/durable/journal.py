"""The journal of one invocation: what a turn added, written step by step.

The engine calls ``step`` at its checkpoints; each step commits only the
messages and events added since the previous one (one log chunk) together
with the turn's state, in one atomic write guarded by the session lease. That
is what keeps a step's cost flat however long the session gets.

The gate's rule decisions are audited by the log itself: each ``actauth:decision``
event is committed with its step, and the audit trail reads them from there
(``TableAudit.for_subject``), so a step writes no item of its own for them.

Outbox rows ride along in the same write: a pause's approval or question, a
finish's ``run_finish``, and whatever was ``announce``d (a run's ``run_start``
goes out with the invocation's first commit, whichever that is). Only after the
write succeeded is ``on_commit`` told, so it can enqueue them.

A message's turn that fails before its first commit (its model fails at once) is
``abandon``ed: what it emitted and an ``error`` event are logged, so the status
route tells the failure as the streamed transports do, and the session is given
back as it was before the message, free for the next one. Its message is not
kept (the caller was told it failed, and may send it again) and its start is not
announced: no run happened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.errors import Misconfigured, SendFailed, SignoffError
from signoff.events import ErrorEvent, dump
from signoff.store.session_records import Commit, LogChunk

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.clock import Clock
    from signoff.engine import TurnState
    from signoff.events import LoopEvent
    from signoff.messages import Message
    from signoff.store.base import TurnSessions
    from signoff.store.pending_records import OutboxRow, PendingItem
    from signoff.store.session_records import SessionRecord

__all__ = ["Journal", "failure_text"]


class Journal:
    """Buffers a turn's events and new messages and commits them as log chunks."""

    def __init__(
        self,
        *,
        sessions: TurnSessions,
        record: SessionRecord,
        owner: str,
        clock: Clock,
        lease_ttl: float,
        history_length: int,
        run_events: list[dict[str, Any]],
        on_commit: Callable[[SessionRecord, list[OutboxRow]], None] | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.sessions = sessions
        self.record = record
        self.owner = owner
        self.clock = clock
        self.lease_ttl = lease_ttl
        self._written = history_length
        self._events: list[dict[str, Any]] = []
        self._announced: list[OutboxRow] = []
        self._on_commit = on_commit
        # A live transport's view of each event as it happens (before it is committed).
        self._on_event = on_event
        # Every event of the current turn, including those of earlier invocations.
        self.run_events = run_events

    def announce(self, rows: list[OutboxRow]) -> None:
        """Add outbox rows to the next commit, whichever commit that is."""
        self._announced.extend(rows)

    def event(self, event: LoopEvent) -> None:
        wire = dump(event)
        self._events.append(wire)
        self.run_events.append(wire)
        if self._on_event is not None:
            self._on_event(wire)

    def abandon(
        self, history: list[Message], before: SessionRecord | None, failure: BaseException
    ) -> None:
        """Log a failed message's events and its ``error``, and give the session back.

        ``history`` is the conversation without the failed message; ``before`` the
        session as it was (None: the message created it). The error is logged, not
        sent to ``on_event``: a live transport reports the failure itself.

        Raises:
            LeaseLost: another process took the session over.
        """
        self._events.append(dump(ErrorEvent(error=failure_text(failure))))
        self._announced = []
        self.commit(
            None,
            history,
            status=before.status if before is not None else "idle",
            release=True,
            text=before.text if before is not None else None,
            stop_reason=before.stop_reason if before is not None else None,
        )

    def step(self, state: TurnState, history: list[Message]) -> None:
        """A checkpoint inside a running turn: keep the lease, renew it."""
        self.commit(state, history, status="running", release=False)

    def commit(
        self,
        state: TurnState | None,
        history: list[Message],
        *,
        status: str,
        release: bool,
        pending: PendingItem | None = None,
        outbox: list[OutboxRow] | None = None,
        text: str | None = None,
        stop_reason: str | None = None,
    ) -> None:
        """Write the state and everything new since the last commit, atomically.

        ``outbox`` rows and the rows announced since the last commit are written
        with it and handed to ``on_commit`` once the write succeeded.

        Raises:
            LeaseLost: another process took the session over.
        """
        now = self.clock.now().timestamp()
        record = self.record
        chunk = None
        new_messages = history[self._written :]
        if new_messages or self._events:
            chunk = LogChunk(
                session_id=record.session_id,
                seq=record.next_seq,
                run_id=state.run_id if state else "",
                messages=list(new_messages),
                events=list(self._events),
                at=now,
                expires_at=record.expires_at,
            )
        updated = record.model_copy(
            update={
                "state": state,
                "status": status,
                "next_seq": record.next_seq + (1 if chunk else 0),
                "event_count": record.event_count + (len(chunk.events) if chunk else 0),
                "message_count": len(history),
                "pending_id": pending.id if pending else None,
                "text": text,
                "stop_reason": stop_reason,
                "lease_owner": None if release else self.owner,
                "lease_until": None if release else now + self.lease_ttl,
                "updated_at": now,
            }
        )
        # Announced rows count as created when committed: the sweeper's grace for
        # an unsent row runs from the moment it could have been enqueued.
        announced = [row.model_copy(update={"created_at": now}) for row in self._announced]
        rows = [*announced, *(outbox or [])]
        # as stored: the next commit keeps what the store added (the day it was listed).
        # Its parts are validated records already: constructing it unvalidated spares a
        # fresh process's first step building the schema of a container never stored.
        updated = self.sessions.commit(
            Commit.model_construct(
                session=updated,
                chunk=chunk,
                pending=pending,
                outbox=rows,
                release=release,
            ),
            owner=self.owner,
        )
        self.record = updated
        self._written = len(history)
        self._events = []
        self._announced = []
        if rows and self._on_commit is not None:
            self._on_commit(updated, rows)


def failure_text(error: BaseException) -> str:
    """What a failed turn's logged ``error`` event says, to whoever may read the session.

    The message of an error the API answers with a 4xx, 502 or 503 is written for
    the caller (the API's ``detail`` is the same text); what it withholds — a
    misconfiguration, a channel's failure, anything unexpected — may name
    internals, so the log does not repeat it either.
    """
    if type(error) is SignoffError or not isinstance(error, SignoffError):
        return "internal error"
    return "internal error" if isinstance(error, Misconfigured | SendFailed) else str(error)
