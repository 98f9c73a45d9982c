"""In-memory continuations: the sessions scheduled to go on, in order, until drained."""

from __future__ import annotations

import threading

from signoff.continuations.base import continuation_event

__all__ = ["MemoryContinuations"]


class MemoryContinuations:
    """Records each scheduled session id; a test or a local loop drains and runs them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scheduled: list[str] = []

    def schedule(self, session_id: str) -> None:
        """Record that ``session_id`` is to be continued."""
        # Built and dropped: an id the Lambda adapter would refuse is refused here too.
        continuation_event(session_id)
        with self._lock:
            self._scheduled.append(session_id)

    def drain(self) -> list[str]:
        """The session ids scheduled since the last drain, oldest first; forgets them."""
        with self._lock:
            taken, self._scheduled = self._scheduled, []
        return taken
