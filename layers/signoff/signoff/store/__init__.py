"""The durable store: its records and its ports.

Adapters are imported where they are wired (``signoff.store.memory``,
``signoff.store.dynamodb``, ``signoff.store.s3``), so importing this package
never loads boto3. The names below are imported on first use (PEP 562): a path
that reads only pending items (``signoff.store.pending_records``) loads neither
the session records nor the engine's state behind them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.plugins import lazy_exports

if TYPE_CHECKING:
    from signoff.store.base import Audit, Blobs, ClaimFor, Outbox, PendingItems, Sessions
    from signoff.store.pending_records import OutboxRow, PendingItem, PendingStatus
    from signoff.store.records import AuditEntry
    from signoff.store.session_records import Commit, LogChunk, SessionRecord, SessionStatus

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

_HOMES = {
    "Audit": "base",
    "Blobs": "base",
    "ClaimFor": "base",
    "Outbox": "base",
    "PendingItems": "base",
    "Sessions": "base",
    "OutboxRow": "pending_records",
    "PendingItem": "pending_records",
    "PendingStatus": "pending_records",
    "AuditEntry": "records",
    "Commit": "session_records",
    "LogChunk": "session_records",
    "SessionRecord": "session_records",
    "SessionStatus": "session_records",
}


__getattr__ = lazy_exports(__name__, _HOMES)
