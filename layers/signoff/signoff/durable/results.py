"""What a durable turn call returns: finished, paused on a pending item, or still running;
or, for a continuation with nothing to continue, why it was skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from signoff.store.pending_records import PendingItem

__all__ = ["Decided", "Skipped", "TurnResult"]


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    """The outcome of ``Turns.send`` / ``resolve`` / ``proceed``.

    ``events`` are the wire form of every LoopEvent of the turn so far, in order
    (a resumed turn's events include those from before its pause).
    """

    status: Literal["finished", "paused", "running"]
    session_id: str
    agent: str
    events: list[dict[str, Any]] = field(default_factory=list)
    text: str | None = None
    stop_reason: str | None = None
    pending: PendingItem | None = None


@dataclass(frozen=True, kw_only=True)
class Skipped:
    """A continuation (``Turns.proceed``) that found nothing for it to run.

    ``session_status`` is the session's status as the continuation found it:
    ``paused`` (waiting on a person), ``done`` or ``idle`` (nothing under way),
    or ``running`` (another live process holds its lease and finishes the turn).
    """

    session_id: str
    agent: str
    session_status: str
    pending_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class Decided:
    """The outcome of ``Turns.decide`` / ``expire``: the item as decided, and its turn.

    ``result`` is None when the turn was not run here: handed to a continuation
    (a chat click), or a resume the sweeper will retry.
    """

    item: PendingItem
    result: TurnResult | None = None
