"""Outbox rows and audit entries in DynamoDB."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from signoff.errors import NotFound
from signoff.store import codec, rules
from signoff.store.codec import visible
from signoff.store.dynamodb.table import (
    Condition,
    ConditionFailed,
    TransactionRefused,
    all_of,
)
from signoff.store.records import AuditEntry, OutboxRow

if TYPE_CHECKING:
    from signoff.store.codec import Codec
    from signoff.store.dynamodb.table import DynamoTable

__all__ = ["DynamoAudit", "DynamoOutbox"]

# the row exists for readers: written, and its retention has not passed
EXISTS: Final = "attribute_exists(#pk) AND (attribute_not_exists(#ttl) OR #ttl > :now)"
# the row is new: never written, or its retention passed
ABSENT: Final = "attribute_not_exists(#pk) OR #ttl <= :now"


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

    def add(self, rows: list[OutboxRow]) -> bool:
        """Write new rows all together; False, writing nothing, if one of them exists."""
        if not rows:
            return True
        fresh = Condition(expression=ABSENT, values={":now": self._table.now()})
        try:
            self._table.transact([(self._codec.encode(row), fresh) for row in rows])
        except TransactionRefused:
            return False
        return True

    def claim(
        self, pending_id: str, channel: str, *, owner: str, until: float, now: float
    ) -> OutboxRow | None:
        """Take the row's send lock and count the attempt; None if it is not sendable."""
        key = codec.outbox_key(pending_id, channel)
        current = self._table.get(key)
        if current is None or not visible(current, now):
            raise NotFound("outbox row", f"{pending_id}/{channel}")
        row = self._codec.decode(current, OutboxRow)
        if not rules.sendable(row, owner=owner, now=now):
            return None
        condition = Condition(
            expression=all_of(
                EXISTS,
                # not sent yet
                "attribute_not_exists(#notified_at)",
                # not given up on
                "attribute_not_exists(#failed) OR #failed = :false",
                # no live lock of another owner
                "attribute_not_exists(#lock_owner) OR #lock_until <= :now OR #lock_owner = :owner",
                # nobody claimed it since we read it
                "attribute_not_exists(#attempts) OR #attempts = :attempts",
            ),
            values={":now": now, ":false": False, ":owner": owner, ":attempts": row.attempts},
        )
        try:
            updated = self._table.update(
                key,
                set_attrs={"lock_owner": owner, "lock_until": until, "attempts": row.attempts + 1},
                condition=condition,
            )
        except ConditionFailed:
            return None
        return self._codec.decode(updated, OutboxRow)

    def mark_sent(
        self, pending_id: str, channel: str, *, at: float, receipt: dict[str, str] | None = None
    ) -> None:
        """Record ``notified_at``; only after the channel accepted the send."""
        attrs: dict[str, object] = {"notified_at": at}
        if receipt:
            attrs["receipt"] = dict(receipt)
        self._settle(pending_id, channel, attrs)

    def mark_failed(self, pending_id: str, channel: str, *, reason: str) -> None:
        """Give the row up for good, with its reason."""
        self._settle(pending_id, channel, {"failed": True, "last_error": reason})

    def release(
        self,
        pending_id: str,
        channel: str,
        *,
        owner: str,
        error: str,
        receipt: dict[str, str] | None = None,
    ) -> None:
        """Drop ``owner``'s lock after a transient failure, keeping a partial ``receipt``."""
        condition = Condition(
            expression=all_of(EXISTS, "#lock_owner = :owner"),
            values={":now": self._table.now(), ":owner": owner},
        )
        attrs: dict[str, object] = {"last_error": error}
        if receipt:
            attrs["receipt"] = dict(receipt)
        try:
            self._table.update(
                codec.outbox_key(pending_id, channel),
                set_attrs=attrs,
                remove=codec.LOCK_REMOVES,
                condition=condition,
            )
        except ConditionFailed:
            return  # the lock expired and someone else holds it: nothing of ours to drop

    def _settle(self, pending_id: str, channel: str, attrs: dict[str, object]) -> None:
        condition = Condition(expression=EXISTS, values={":now": self._table.now()})
        try:
            self._table.update(
                codec.outbox_key(pending_id, channel),
                set_attrs=attrs,
                remove=codec.SETTLED_REMOVES,
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
