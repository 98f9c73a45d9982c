"""The turn engine and the values it works with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.engine.state import (
    Answered,
    Approved,
    CallState,
    Continue,
    Denied,
    Finished,
    Outcome,
    Paused,
    Resolution,
    TurnState,
)

if TYPE_CHECKING:
    from signoff.engine.turn import Engine

__all__ = [
    "Answered",
    "Approved",
    "CallState",
    "Continue",
    "Denied",
    "Engine",
    "Finished",
    "Outcome",
    "Paused",
    "Resolution",
    "TurnState",
]


def __getattr__(name: str) -> Any:
    # The loop (and the gate, budget and events it pulls in) loads on first use:
    # the store's records need only the state, and the notifier never runs a turn.
    if name == "Engine":
        from signoff.engine.turn import Engine

        return Engine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
