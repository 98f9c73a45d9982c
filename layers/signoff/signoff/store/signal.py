"""Commits made in this process, for a watcher in the same process to wake on.

A long-poll (``signoff.api.waiting``) learns of a new log chunk by reading the
log, backing off between reads. When the turn that writes the chunk runs in
the same process (the local stack runs every function in one), the commit
itself can wake the watcher at once; the read that follows confirms it. On
Lambda a status request and a turn never share a sandbox, so nothing wakes a
waiter there and the backoff alone applies.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["COMMITS", "Commits"]


class Commits:
    """Per watched session, how many commits this process made since it was watched."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        # session id -> (watchers, commits); only watched sessions are kept, so a
        # long-lived process remembers nothing of sessions nobody waits on
        self._watched: dict[str, tuple[int, int]] = {}

    def committed(self, session_id: str) -> None:
        """A commit to ``session_id`` succeeded in this process: wake its watchers."""
        with self._changed:
            if session_id in self._watched:
                watchers, count = self._watched[session_id]
                self._watched[session_id] = (watchers, count + 1)
                self._changed.notify_all()

    @contextmanager
    def watch(self, session_id: str) -> Iterator[Callable[[float], bool]]:
        """Inside, ``wait(timeout)`` returns True as soon as this process commits to
        ``session_id`` (counting from the previous wait), False when ``timeout`` passed."""
        with self._changed:
            watchers, count = self._watched.get(session_id, (0, 0))
            self._watched[session_id] = (watchers + 1, count)
        seen = count

        def wait(timeout: float) -> bool:
            nonlocal seen
            with self._changed:
                woken = self._changed.wait_for(
                    lambda: self._watched[session_id][1] != seen, timeout
                )
                seen = self._watched[session_id][1]
                return woken

        try:
            yield wait
        finally:
            with self._changed:
                watchers, count = self._watched[session_id]
                if watchers == 1:
                    del self._watched[session_id]
                else:
                    self._watched[session_id] = (watchers - 1, count)


COMMITS: Final = Commits()
