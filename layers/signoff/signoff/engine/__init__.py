"""The turn engine and the values it works with."""

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
