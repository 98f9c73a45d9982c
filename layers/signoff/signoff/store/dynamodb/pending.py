"""Pending items in DynamoDB: each resolution is one conditional update, in one
transaction with its audit entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from signoff.errors import NotFound, StoreUnavailable
from signoff.store import codec, rules
from signoff.store.codec import visible
from signoff.store.dynamodb.table import Condition, ConditionFailed, TransactionRefused, all_of
from signoff.store.records import PendingItem

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.codec import Codec, Item
    from signoff.store.dynamodb.table import DynamoTable
    from signoff.store.records import AuditEntry, PendingStatus

__all__ = ["DynamoPendingItems"]

# the item exists for readers: written, and its retention has not passed
EXISTS: Final = "attribute_exists(#pk) AND (attribute_not_exists(#ttl) OR #ttl > :now)"
# nobody resolved it before: the first resolution wins
PENDING: Final = "#status = :pending"
# a human decides only before the item's time runs out
IN_TIME: Final = "#expires_at > :now"
# the sweeper expires it only once its time has run out
DUE: Final = "#expires_at <= :now"
# nobody recorded this reminder before: two sweeps never send the same one
# (an item written before reminders were counted has no count: it has had none)
UNSEEN: Final = "#reminders = :count"
UNSEEN_FIRST: Final = "attribute_not_exists(#reminders) OR #reminders = :count"


class DynamoPendingItems:
    """Approvals and questions waiting for a human."""

    def __init__(self, table: DynamoTable, coder: Codec) -> None:
        self._table = table
        self._codec = coder

    def _current(self, item: Item | None, now: float) -> PendingItem | None:
        if item is None or not visible(item, now):
            return None
        return self._codec.decode(item, PendingItem)

    def get(self, pending_id: str) -> PendingItem | None:
        """The item, or None (also when its retention has passed)."""
        return self._current(self._table.get(codec.pending_key(pending_id)), self._table.now())

    def resolve(
        self,
        pending_id: str,
        *,
        status: PendingStatus,
        actor: str,
        channel: str,
        now: float,
        answer: str | None = None,
        note: str | None = None,
        retain_until: float | None = None,
        audit: AuditEntry,
    ) -> PendingItem:
        """Move a pending item to ``status`` and record ``audit``, in one transaction."""
        attrs = rules.resolution_attrs(
            status=status,
            actor=actor,
            channel=channel,
            now=now,
            answer=answer,
            note=note,
            retain_until=retain_until,
        )
        condition = Condition(
            expression=all_of(EXISTS, PENDING, DUE if status == "expired" else IN_TIME),
            values={":now": now, ":pending": "pending"},
        )
        try:
            # TransactWriteItems: a decision is never stored without its audit entry,
            # and a refused condition writes neither
            resolved = self._table.update_with_new(
                codec.pending_key(pending_id),
                set_attrs=attrs,
                remove=codec.RESOLUTION_REMOVES,
                condition=condition,
                new=[self._codec.encode(audit)],
            )
        except TransactionRefused as refused:
            # the entry's id is taken: ids are fresh, so this is a bug, and nothing was written
            raise StoreUnavailable(f"audit entry {audit.id} exists; nothing written") from refused
        except ConditionFailed as failed:
            # the item the condition saw, returned by the same call
            current = self._current(failed.item, now)
            refusal = rules.resolution_refusal(pending_id, current, status, now)
            if refusal is None:
                # both rules read the same item, so this means they disagree: a bug
                refusal = StoreUnavailable(f"pending item {pending_id} changed; retry")
            raise refusal from failed
        return self._codec.decode(resolved, PendingItem)

    def mark_resumed(self, pending_id: str) -> None:
        """Record that the turn was resumed after the resolution."""
        condition = Condition(expression=EXISTS, values={":now": self._table.now()})
        try:
            self._table.update(
                codec.pending_key(pending_id), set_attrs={"resumed": True}, condition=condition
            )
        except ConditionFailed as failed:
            raise NotFound("pending item", pending_id) from failed

    def waiting(self, now: float) -> Iterator[PendingItem]:
        """Items still pending and not yet due at ``now``, soonest expiry first."""
        partition, lower = codec.waiting_after(now)
        pages = self._table.query(
            "#gsi1pk = :partition AND #gsi1sk > :lower",
            {":partition": partition, ":lower": lower},
            index=codec.PENDING_INDEX,
        )
        for page in pages:
            for item in page:
                record = self._current(item, self._table.now())
                # the index is eventually consistent: recheck what it returned
                if record and record.status == "pending" and record.expires_at > now:
                    yield record

    def note_reminder(self, pending_id: str, count: int, *, now: float) -> PendingItem | None:
        """Record reminder number ``count + 1``; None if it was recorded before or is moot."""
        condition = Condition(
            expression=all_of(EXISTS, PENDING, IN_TIME, UNSEEN_FIRST if count == 0 else UNSEEN),
            values={":now": now, ":pending": "pending", ":count": count},
        )
        try:
            updated = self._table.update(
                codec.pending_key(pending_id),
                set_attrs=rules.reminder_attrs(count, now),
                condition=condition,
            )
        except ConditionFailed:
            return None  # another sweep sent it, or the item was resolved or fell due
        return self._codec.decode(updated, PendingItem)

    def due(self, now: float, *, limit: int = 100) -> list[PendingItem]:
        """Pending items whose ``expires_at`` has passed, oldest first."""
        partition, upper = codec.due_before(now)
        found: list[PendingItem] = []
        if limit <= 0:
            return found
        pages = self._table.query(
            "#gsi1pk = :partition AND #gsi1sk < :upper",
            {":partition": partition, ":upper": upper},
            index=codec.PENDING_INDEX,
            limit=limit,
        )
        for page in pages:
            for item in page:
                record = self._current(item, self._table.now())
                # the index is eventually consistent: recheck what it returned
                if record and record.status == "pending" and record.expires_at <= now:
                    found.append(record)
                if len(found) == limit:
                    return found
        return found
