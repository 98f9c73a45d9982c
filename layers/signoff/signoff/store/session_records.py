"""What a session keeps: the session, its log, and a turn's one atomic write.

A session's checkpoint is the engine's ``TurnState`` and its log holds messages,
so these import the engine's state; paths that read only pending items and outbox
rows use ``signoff.store.pending_records`` instead.
"""

from typing import Any, ClassVar, Literal

from pydantic import Field

from signoff.engine.state import TurnState
from signoff.messages import Message
from signoff.store.pending_records import OutboxRow, PendingItem
from signoff.store.records import Record

__all__ = ["Commit", "LogChunk", "SessionRecord", "SessionStatus"]

SessionStatus = Literal["idle", "running", "paused", "done"]


class SessionRecord(Record):
    """One conversation: where its current turn stands, and who may write it."""

    item_kind: ClassVar[str] = "session"

    session_id: str
    agent: str
    tenant: str
    environment: str
    status: SessionStatus = "idle"
    # The checkpoint of the current turn (None between turns).
    state: TurnState | None = None
    # Log chunks are numbered first_seq, first_seq + 1, …; the next one gets
    # ``next_seq``. A session starts numbering at its creation time in
    # milliseconds, so a session id reused after its retention ran out never
    # reads (or collides with) chunks of its expired predecessor.
    first_seq: int = 0
    next_seq: int = 0
    # The first chunk of the current turn, so a response can carry the turn's events.
    run_start_seq: int = 0
    # How many events the log holds, so a watcher's ``?after=N`` reads only the
    # newest chunks.
    event_count: int = 0
    message_count: int = 0
    pending_id: str | None = None
    text: str | None = None
    stop_reason: str | None = None
    # The lease: one turn per session at a time.
    lease_owner: str | None = None
    lease_until: float | None = None
    # When the lease its claim took ran out: the session's sweep key, which a
    # commit extending the lease leaves alone (``signoff.store.codec``).
    lease_key_at: float | None = None
    updated_at: float = 0.0
    # The UTC day the agent's gated-sessions listing last listed the session: a
    # later commit that day gating a call again writes no second entry.
    gated_day: str | None = None
    # Epoch seconds after which the store may delete the session and its log:
    # creation + retention, fixed for the session's life so its chunks expire with it.
    expires_at: float | None = None


class LogChunk(Record):
    """What one step of a turn added: its messages and its events (wire form)."""

    item_kind: ClassVar[str] = "chunk"

    session_id: str
    seq: int
    run_id: str
    messages: list[Message] = Field(default_factory=list)
    events: list[dict[str, Any]] = Field(default_factory=list)
    at: float = 0.0
    expires_at: float | None = None


class Commit(Record):
    """One atomic write of a turn: the session, what the step added, and for a
    pause the new pending item with its outbox rows."""

    session: SessionRecord
    chunk: LogChunk | None = None
    pending: PendingItem | None = None
    outbox: list[OutboxRow] = Field(default_factory=list)
    # Keep the lease (a step inside a running turn) or give it up (pause, finish).
    release: bool = False
