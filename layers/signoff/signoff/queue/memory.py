"""An in-memory queue: what was sent, in order, until received."""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MemoryQueue"]


class MemoryQueue:
    """Messages kept as JSON text, as SQS keeps them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: deque[str] = deque()

    def send(self, body: dict[str, Any]) -> None:
        """Enqueue one JSON message (a body that is not JSON fails here, as with SQS)."""
        # Serialised now: a later change to ``body`` must not change what was sent.
        text = json.dumps(body, separators=(",", ":"))
        with self._lock:
            self._messages.append(text)

    def send_batch(self, bodies: Sequence[dict[str, Any]]) -> None:
        """Enqueue every message of ``bodies``; one that is not JSON sends none of them."""
        texts = [json.dumps(body, separators=(",", ":")) for body in bodies]
        with self._lock:
            self._messages.extend(texts)

    def receive(self, max: int = 10) -> list[dict[str, Any]]:
        """Take up to ``max`` messages off the queue, oldest first."""
        with self._lock:
            taken = [self._messages.popleft() for _ in range(min(max, len(self._messages)))]
        return [json.loads(text) for text in taken]
