"""The queue port: how a committed notification reaches the notifier, and a sweep's tasks
its workers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["BatchQueue", "Queue"]


class Queue(Protocol):
    def send(self, body: dict[str, Any]) -> None:
        """Enqueue one JSON message.

        Raises:
            StoreUnavailable: the queue could not take it; the sweeper re-drives it.
        """


class BatchQueue(Queue, Protocol):
    def send_batch(self, bodies: Sequence[dict[str, Any]]) -> None:
        """Enqueue every JSON message of ``bodies``, up to ten a request.

        Raises:
            StoreUnavailable: the queue did not take some of them (those it took stay
                sent: a sweep's tasks are safe to run twice).
        """
