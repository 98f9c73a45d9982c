"""Outbox rows over a ``Table``."""

from __future__ import annotations

import heapq
from itertools import chain, islice
from typing import TYPE_CHECKING

from signoff.errors import NotFound
from signoff.store import codec, keys, rules
from signoff.store.pending_records import OutboxRow
from signoff.store.stored import Stored
from signoff.store.table import Attr, ConditionFailed, Put, Update

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.table import Condition, Item

__all__ = ["TableOutbox"]


class TableOutbox(Stored):
    """The ``Outbox`` port: one notification row per subject and channel."""

    def rows(self, pending_id: str) -> list[OutboxRow]:
        """Every channel's row of one subject, by channel name."""
        pk, prefix = keys.outbox_prefix(pending_id)
        pages = self._items.query(pk, Attr("sk").begins_with(prefix), index=keys.TABLE_KEY)
        return list(self._found(pages, OutboxRow))

    def add(self, rows: list[OutboxRow]) -> bool:
        """Write new rows all together; False, writing nothing, if one of them exists."""
        if not rows:
            return True
        fresh = rules.absent(self._now())
        try:
            self._items.transact([Put(self._codec.encode(row), fresh) for row in rows])
        except ConditionFailed:
            return False
        return True

    def claim(
        self, pending_id: str, channel: str, *, owner: str, until: float, now: float
    ) -> OutboxRow | None:
        """Take the row's send lock and count the attempt; None if it is not sendable.

        Raises:
            NotFound: no such row.
        """
        key = keys.outbox_key(pending_id, channel)
        current = self._items.get(key)
        row = self._read(current, OutboxRow, now)
        if row is None:
            raise NotFound("outbox row", f"{pending_id}/{channel}")
        sendable = rules.sendable(owner, now)
        if not sendable.holds(current):
            return None
        # nobody claimed it since we read it: the attempt count is the one we add to
        unclaimed = Attr("attempts").missing() | Attr("attempts").eq(row.attempts)
        attrs = {"lock_owner": owner, "lock_until": until, "attempts": row.attempts + 1}
        try:
            updated = self._items.update(Update(key, attrs, condition=sendable & unclaimed))
        except ConditionFailed:
            return None
        return self._codec.decode(updated, OutboxRow)

    def mark_sent(
        self, pending_id: str, channel: str, *, at: float, receipt: dict[str, str] | None = None
    ) -> None:
        """Record ``notified_at``; only after the channel accepted the send."""
        attrs: Item = {"notified_at": at}
        if receipt:
            attrs["receipt"] = dict(receipt)
        self._settle(pending_id, channel, attrs)

    def record_receipt(
        self, pending_id: str, channel: str, receipt: dict[str, str], *, owner: str
    ) -> bool:
        """Keep a send's receipt under ``owner``'s lock; False if the row is not ours."""
        key = keys.outbox_key(pending_id, channel)
        # Only the lock holder writes: a sender whose lock lapsed and was taken over
        # must not replace the new holder's receipt. The lock itself stays.
        condition = rules.releasable(owner, self._now())
        try:
            self._items.update(Update(key, {"receipt": dict(receipt)}, condition=condition))
        except ConditionFailed:
            return False
        return True

    def mark_failed(
        self, pending_id: str, channel: str, *, reason: str, retry_at: float | None = None
    ) -> None:
        """Record a permanent failure with its reason: retried at ``retry_at``, or never."""
        key = keys.outbox_key(pending_id, channel)
        row = self._read(self._items.get(key), OutboxRow)
        if row is None:
            raise NotFound("outbox row", f"{pending_id}/{channel}")
        attrs: Item = {"failed": True, "last_error": reason, "failures": row.failures + 1}
        now = self._now()
        place = self._codec.outbox_place
        if retry_at is None:
            removes: tuple[str, ...] = (*codec.LOCK_REMOVES, *keys.LEGACY_KEYS, "retry_at")
            attrs |= place(pending_id, channel, state="failed", at=now)
        else:
            removes = (*codec.LOCK_REMOVES, *keys.LEGACY_KEYS)
            attrs |= {"retry_at": retry_at} | place(pending_id, channel, state="retry", at=retry_at)
        try:
            self._items.update(Update(key, attrs, removes, rules.live(now)))
        except ConditionFailed as failed:
            raise NotFound("outbox row", f"{pending_id}/{channel}") from failed

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
        attrs: Item = {"last_error": error}
        if receipt:
            attrs["receipt"] = dict(receipt)
        key = keys.outbox_key(pending_id, channel)
        condition = rules.releasable(owner, self._now())
        try:
            self._items.update(Update(key, attrs, codec.LOCK_REMOVES, condition))
        except ConditionFailed:
            return  # the lock expired and someone else holds it: nothing of ours to drop

    def _settle(self, pending_id: str, channel: str, attrs: Item) -> None:
        key = keys.outbox_key(pending_id, channel)
        condition = rules.live(self._now())
        try:
            self._items.update(Update(key, attrs, codec.SETTLED_REMOVES, condition))
        except ConditionFailed as failed:
            raise NotFound("outbox row", f"{pending_id}/{channel}") from failed

    def unsent(self, *, created_before: float, limit: int = 100) -> list[OutboxRow]:
        """Rows never sent (and not failed), oldest first (every shard, and what the
        previous release's index still lists)."""
        shards = [self.unsent_in(shard, created_before) for shard in self._shards()]
        upper = keys.time_key(created_before)
        legacy = self._decoded(
            self._legacy(keys.UNSENT_INDEX, "UNSENT", upper), OutboxRow, _unsent(created_before)
        )
        return list(islice(heapq.merge(*shards, legacy, key=_created), limit))

    def unsent_in(self, shard: int, created_before: float) -> Iterator[OutboxRow]:
        """One shard's rows never sent (and not failed), oldest first, read lazily."""
        swept = self._swept(keys.SENDS, shard, keys.time_key(created_before))
        return self._decoded(swept, OutboxRow, _unsent(created_before))

    def retries_due(self, now: float, *, limit: int = 100) -> list[OutboxRow]:
        """Failed rows whose slow retry is due at ``now``, soonest due first."""
        shards = [self.retries_due_in(shard, now) for shard in self._shards()]
        legacy = self._decoded(
            self._legacy(keys.UNSENT_INDEX, "RETRY", keys.due_by(now)),
            OutboxRow,
            rules.retry_due(now),
        )
        return list(islice(heapq.merge(*shards, legacy, key=_retry_at), limit))

    def retries_due_in(self, shard: int, now: float) -> Iterator[OutboxRow]:
        """One shard's failed rows whose slow retry is due at ``now``, read lazily."""
        swept = self._swept(keys.RETRIES, shard, keys.due_by(now))
        return self._decoded(swept, OutboxRow, rules.retry_due(now))

    def failed(self, *, limit: int = 100) -> list[OutboxRow]:
        """Rows failed for good (no retry left), oldest failure first."""
        keep = Attr("failed").eq(True) & Attr("retry_at").missing()
        upper = "~"  # above every time key
        shards = [self._swept(keys.FAILED, shard, upper) for shard in self._shards()]
        legacy = self._legacy(keys.UNSENT_INDEX, "FAILED", None)
        found = self._decoded(chain(*shards, legacy), OutboxRow, keep)
        return sorted(found, key=_created)[:limit]

    def redrive(self, pending_id: str, channel: str, *, now: float, due_only: bool) -> bool:
        """Make a failed row sendable again (one conditional write); False if it is not failed.

        ``due_only`` is the sweeper's slow retry: only once the row's ``retry_at``
        has come, keeping its failure count. Otherwise an operator's re-drive
        (``signoff outbox retry``): any failed row, with a fresh schedule.
        """
        key = keys.outbox_key(pending_id, channel)
        place = self._codec.outbox_place(pending_id, channel, state="unsent", at=now)
        attrs: Item = {"failed": False} | place
        if not due_only:
            attrs["failures"] = 0
        condition = rules.redrivable(now, due_only=due_only)
        try:
            self._items.update(Update(key, attrs, ("retry_at", *keys.LEGACY_KEYS), condition))
        except ConditionFailed:
            return False
        return True


def _unsent(created_before: float) -> Condition:
    return rules.unsent(created_before) & (Attr("failed").missing() | Attr("failed").eq(False))


def _created(row: OutboxRow) -> tuple[float, str, str]:
    # the sweep index's order: by time, then subject and channel
    return row.created_at, row.pending_id, row.channel


def _retry_at(row: OutboxRow) -> tuple[float, str, str]:
    at = row.retry_at if row.retry_at is not None else row.created_at
    return at, row.pending_id, row.channel
