"""The queue port; its adapters (``memory``, ``sqs``) are imported where they are wired."""

from __future__ import annotations

from signoff.queue.base import BatchQueue, Queue

__all__ = ["BatchQueue", "Queue"]
