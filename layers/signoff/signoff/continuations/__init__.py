"""The continuations port; its adapters (``memory``, ``aws``) are imported where they are wired."""

from __future__ import annotations

from signoff.continuations.base import (
    CONTINUE,
    ContinuationEvent,
    Continuations,
    continuation_event,
    continuation_session,
)

__all__ = [
    "CONTINUE",
    "ContinuationEvent",
    "Continuations",
    "continuation_event",
    "continuation_session",
]
