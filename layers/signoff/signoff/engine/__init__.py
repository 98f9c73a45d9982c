"""The turn engine and the values it works with."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from signoff.plugins import lazy_exports

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


# The loop (and the gate, budget and events it pulls in) loads on first use: the
# session records need only the state.
__getattr__ = lazy_exports(__name__, {"Engine": "turn"})
