"""Outbox rows and audit entries in DynamoDB."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from signoff.errors import NotFound
from signoff.store import codec
from signoff.store.codec import visible
from signoff.store.dynamodb.table import Condition, ConditionFailed
from signoff.store.records import AuditEntry, OutboxRow

if TYPE_CHECKING:
    from signoff.store.codec import Codec
    from signoff.store.dynamodb.table import DynamoTable

__all__ = ["DynamoAudit", "DynamoOutbox"]

# the row exists for readers: written, and its retention has not passed
EXISTS: Final = "attribute_exists(#pk) AND (attribute_not_exists(#ttl) OR #ttl > :now)"


class DynamoOutbox:
    """One notification row per pending item and channel."""

    def __init__(self, table: DynamoTable, coder: Codec) -> None:
        self._table = table
        self._codec = coder

    def rows(self, pending_id: str) -> list[OutboxRow]:
        """Every channel's row of one pending item, by channel name."""
        pk, prefix = codec.outbox_prefix(pending_id)
        pages = self._table.query(
            "#pk = :pk AND begins_with(#sk, :prefix)", {":pk": pk, ":prefix": prefix}
        )
        now = self._table.now()
        return [
            self._codec.decode(item, OutboxRow)
            for page in pages
            for item in page
            if visible(item, now)
        ]

    def mark_sent(self, pending_id: str, channel: str, *, at: float) -> None:
        """Record ``notified_at``; only after the channel accepted the send."""
        condition = Condition(expression=EXISTS, values={":now": self._table.now()})
        try:
            self._table.update(
                codec.outbox_key(pending_id, channel),
                set_attrs={"notified_at": at},
                remove=codec.SENT_REMOVES,
                condition=condition,
            )
        except ConditionFailed as failed:
            raise NotFound("outbox row", f"{pending_id}/{channel}") from failed

    def unsent(self, *, created_before: float, limit: int = 100) -> list[OutboxRow]:
        """Rows never sent (and not failed for good), oldest first."""
        partition, upper = codec.unsent_before(created_before)
        found: list[OutboxRow] = []
        if limit <= 0:
            return found
        pages = self._table.query(
            "#gsi2pk = :partition AND #gsi2sk < :upper",
            {":partition": partition, ":upper": upper},
            index=codec.UNSENT_INDEX,
            limit=limit,
        )
        for page in pages:
            now = self._table.now()
            for item in page:
                row = self._codec.decode(item, OutboxRow) if visible(item, now) else None
                # the index is eventually consistent: recheck what it returned
                if row and row.notified_at is None and row.created_at < created_before:
                    found.append(row)
                if len(found) == limit:
                    return found
        return found


class DynamoAudit:
    """Who decided what, per session."""

    def __init__(self, table: DynamoTable, coder: Codec) -> None:
        self._table = table
        self._codec = coder

    def record(self, entries: list[AuditEntry]) -> None:
        """Append ``entries``."""
        for entry in entries:
            self._table.put(self._codec.encode(entry))

    def for_subject(self, subject: str) -> list[AuditEntry]:
        """Every entry about one session, oldest first."""
        pk = codec.audit_key(subject, 0.0, "")[0]
        now = self._table.now()
        return [
            self._codec.decode(item, AuditEntry)
            for page in self._table.query("#pk = :pk", {":pk": pk})
            for item in page
            if visible(item, now)
        ]
