"""Outbox rows and audit entries over a ``Table``."""

from __future__ import annotations

import heapq
from itertools import chain, islice
from typing import TYPE_CHECKING

from signoff.approver.actors import RULES
from signoff.errors import NotFound
from signoff.store import codec, keys, rules
from signoff.store.records import AuditEntry, LogChunk, OutboxRow
from signoff.store.stored import Stored, rows
from signoff.store.table import Attr, ConditionFailed, Put, Update

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.table import Condition, Item

__all__ = ["TableAudit", "TableOutbox", "rule_entries"]


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


class TableAudit(Stored):
    """The ``Audit`` port: who decided what, per session."""

    def record(self, entries: list[AuditEntry]) -> None:
        """Append ``entries``."""
        for item in [self._codec.encode(entry) for entry in entries]:
            self._items.put(item)

    def for_subject(self, subject: str, *, rules: bool = True) -> list[AuditEntry]:
        """Every entry about one session, oldest first; ``rules=False``: without the
        gate's rule decisions, in one read of the other entries (entries stored
        before rules had a partition of their own may still be among them).

        A turn's rule decisions are read from its log (``rule_entries``): each step
        commits them as ``actauth:decision`` events, and writes nothing else for
        them. Rule entries recorded as items (the previous release's, or ``record``'s)
        are read from their partition beside them.
        """
        partitions = [keys.audit_key(subject, 0.0, "", rule=rule)[0] for rule in (False, rules)]
        entries = [
            entry
            for pk in dict.fromkeys(partitions)
            for entry in self._found(self._items.query(pk, index=keys.TABLE_KEY), AuditEntry)
        ]
        if rules:
            pk, low, high = keys.chunk_range(subject, 0)
            log = self._items.query(pk, Attr("sk").between(low, high), index=keys.TABLE_KEY)
            chunks = self._found(log, LogChunk)
            entries += [entry for chunk in chunks for entry in rule_entries(chunk)]
        # the partitions and the log, each in time order: one list in time order
        return sorted(entries, key=lambda entry: keys.audit_key(subject, entry.at, entry.id)[1])

    def of_tenant(
        self,
        tenant: str,
        *,
        since: float,
        until: float,
        before: tuple[float, str] | None = None,
    ) -> Iterator[AuditEntry]:
        """A tenant's entries with ``since <= at < until``, newest first, paged lazily.

        Rule decisions are left out. ``before`` is the ``(at, id)`` of the last entry
        a previous page showed: only older ones follow.
        """
        index = keys.TENANT_INDEX
        # "#" sorts below every id character, so "<until>#" bounds out entries at ``until``
        high = keys.time_key(*before) if before is not None else keys.time_key(until)
        sort = Attr(index.sk).between(keys.time_key(since), high)
        # the tenant's shards, merged into one list, newest first
        shards = [
            rows(self._items.query(partition, sort, index=index, descending=True))
            for partition in self._audit_partitions(tenant)
        ]
        merged = heapq.merge(*shards, key=lambda item: str(item[index.sk]), reverse=True)
        for entry in self._decoded(merged, AuditEntry):
            # BETWEEN is inclusive: the cursor's own entry came on the page before
            if before is None or (entry.at, entry.id) != before:
                yield entry

    def _audit_partitions(self, tenant: str) -> list[str]:
        return [keys.tenant_audit(tenant, shard) for shard in range(self._codec.shards.listing)]


def rule_entries(chunk: LogChunk) -> list[AuditEntry]:
    """The audit entries of the gate's rule decisions one log chunk holds, at the
    time the step was committed; an entry's id names its chunk and its place in it."""
    return [
        AuditEntry(
            id=f"{chunk.seq:016d}.{place:04d}",
            subject=chunk.session_id,
            at=chunk.at,
            kind="rule",
            decision=str(event.get("decision", "")),
            actor=RULES,
            tool=event.get("tool"),
            reason=str(event.get("reason", "")),
        )
        for place, event in enumerate(chunk.events)
        if event.get("type") == "actauth:decision"
    ]


def _unsent(created_before: float) -> Condition:
    return rules.unsent(created_before) & (Attr("failed").missing() | Attr("failed").eq(False))


def _created(row: OutboxRow) -> tuple[float, str, str]:
    # the sweep index's order: by time, then subject and channel
    return row.created_at, row.pending_id, row.channel


def _retry_at(row: OutboxRow) -> tuple[float, str, str]:
    at = row.retry_at if row.retry_at is not None else row.created_at
    return at, row.pending_id, row.channel
