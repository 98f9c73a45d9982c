"""How many calls are inside a block at once, across threads: the run cap's witness.

An agent folder's ``tools.py`` imports ``GAUGE`` (the local stack runs in the
test's process, so every function's copy of the tools shares it) and runs each
tool's body ``inside()`` it; the test reads the most seen at once.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["GAUGE", "Gauge"]


class Gauge:
    """A shared in-flight counter: the current count, its maximum, every enter and exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.entered = 0
        self.spans: list[tuple[float, float]] = []

    @contextmanager
    def inside(self) -> Iterator[None]:
        with self._lock:
            self.now += 1
            self.entered += 1
            self.most = max(self.most, self.now)
        start = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self.now -= 1
                self.spans.append((start, time.monotonic()))

    def overlap(self) -> int:
        """The most spans open at one moment, recomputed from the timestamps."""
        edges = sorted([(s, 1) for s, _ in self.spans] + [(e, -1) for _, e in self.spans])
        most = running = 0
        for _, step in edges:
            running += step
            most = max(most, running)
        return most

    def reset(self) -> None:
        with self._lock:
            self.now = self.most = self.entered = 0
            self.spans = []


GAUGE = Gauge()
