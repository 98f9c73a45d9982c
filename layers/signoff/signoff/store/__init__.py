"""The durable store: its records and its ports.

Adapters are imported where they are wired (``signoff.store.memory``,
``signoff.store.dynamodb``, ``signoff.store.s3``), so importing this package
never loads boto3.
"""

from __future__ import annotations

from signoff.store.base import Audit, Blobs, ClaimFor, Outbox, PendingItems, Sessions
from signoff.store.records import (
    AuditEntry,
    Commit,
    LogChunk,
    OutboxRow,
    PendingItem,
    PendingStatus,
    SessionRecord,
    SessionStatus,
)

__all__ = [
    "Audit",
    "AuditEntry",
    "Blobs",
    "ClaimFor",
    "Commit",
    "LogChunk",
    "Outbox",
    "OutboxRow",
    "PendingItem",
    "PendingItems",
    "PendingStatus",
    "SessionRecord",
    "SessionStatus",
    "Sessions",
]
