"""Where the database channel stores a pending approval (``PendingApprovalsRepository``).

The database channel turns an ``approval`` notification into a
``PendingApprovalRow`` and hands it to a repository; what the row lands in is the
repository's business. A port of one method, ``insert_once``, with adapters:

- ``MemoryPendingApprovals`` (here): a dict, for tests and ``signoff dev``;
- ``PostgresPendingApprovals`` (``signoff.channels.database.channel``): one table, psycopg 3;
- ``DbApiPendingApprovals`` (``signoff.channels.database.dbapi``): the same table through
  any DB-API 2.0 driver whose SQL takes ``ON CONFLICT … DO NOTHING`` (SQLite,
  PostgreSQL through another driver).

Every adapter keeps the channel's promise of at most one row per pending item:
an insert whose ``pendingId`` is already stored changes nothing, so a retry (or a
second channel writing the same place) is harmless. A repository written for
another database implements ``insert_once`` with the same guarantee and passes
the contract suite in ``tests/contract/channels/test_pending_approvals_contract.py``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from signoff.channels.database.rows import PendingApprovalRow

__all__ = ["MemoryPendingApprovals", "PendingApprovalsRepository", "StoredApproval"]


@runtime_checkable
class PendingApprovalsRepository(Protocol):
    """Stores each pending approval's row at most once."""

    @property
    def location(self) -> str:
        """Where the rows go (a table's name), for the outbox row's receipt; no secret."""
        ...

    def insert_once(self, row: PendingApprovalRow, idempotency_key: str) -> bool:
        """Store ``row`` unless a row of its ``pending_id`` is stored already.

        ``idempotency_key`` is the channel's key of the send, stored beside the row.

        Returns:
            True when this call stored the row, False when one was there (a retry).

        Raises:
            SendFailed: the row may not be stored; ``retryable`` says whether a later
                attempt can pass. Its ``channel`` is replaced by the channel's name.
        """
        ...


@dataclass(frozen=True)
class StoredApproval:
    """One row as the memory adapter holds it: the ``PendingApprovalRow`` and the send's key."""

    row: PendingApprovalRow
    idempotency_key: str


class MemoryPendingApprovals:
    """Rows in a dict keyed by pending id, first write wins; safe across threads."""

    def __init__(self, location: str = "memory") -> None:
        self._location = location
        self._rows: dict[str, StoredApproval] = {}
        # The notifier sends channels from a thread pool; check-and-set under one lock.
        self._lock = threading.Lock()

    @property
    def location(self) -> str:
        return self._location

    def insert_once(self, row: PendingApprovalRow, idempotency_key: str) -> bool:
        with self._lock:
            if row.pending_id in self._rows:
                return False
            self._rows[row.pending_id] = StoredApproval(row, idempotency_key)
            return True

    def rows(self) -> list[StoredApproval]:
        """Every stored row, in the order they were first stored."""
        with self._lock:
            return list(self._rows.values())
