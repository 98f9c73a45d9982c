"""The queue port: how a committed notification reaches the notifier."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["Queue"]


class Queue(Protocol):
    def send(self, body: dict[str, Any]) -> None:
        """Enqueue one JSON message.

        Raises:
            StoreUnavailable: the queue could not take it; the sweeper re-drives it.
        """
