"""In-memory adapters of every store port: the same item dicts as DynamoDB, behind one lock.

The conditions are the pure rules of ``signoff.store.rules`` applied under the
lock, so a contract test that passes here and on DynamoDB pins one behaviour
for both.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from signoff.clock import SystemClock
from signoff.errors import LeaseLost, NotFound, StoreUnavailable
from signoff.store import codec, rules
from signoff.store.codec import Codec, Item, Key, visible
from signoff.store.records import (
    ApiKey,
    AuditEntry,
    LogChunk,
    OutboxRow,
    PendingItem,
    SessionRecord,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from signoff.clock import Clock
    from signoff.store.base import ClaimFor
    from signoff.store.records import Commit, PendingStatus

__all__ = [
    "MemoryApiKeys",
    "MemoryAudit",
    "MemoryBlobs",
    "MemoryOutbox",
    "MemoryPendingItems",
    "MemorySessions",
    "MemoryStore",
]


class MemoryBlobs:
    """Large values in a dict."""

    def __init__(self, *, lock: threading.RLock | None = None) -> None:
        self._lock = lock or threading.RLock()
        self._data: dict[str, bytes] = {}

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing what was there."""
        with self._lock:
            self._data[key] = bytes(data)

    def get(self, key: str) -> bytes:
        """The bytes under ``key``.

        Raises:
            NotFound: nothing was stored under ``key``.
        """
        with self._lock:
            if key not in self._data:
                raise NotFound("blob", key)
            return self._data[key]


class _Items:
    """The item dicts of one store by key; callers hold ``lock`` across read and write."""

    def __init__(self, lock: threading.RLock, now: Callable[[], float]) -> None:
        self.lock = lock
        self.now = now
        self._rows: dict[Key, Item] = {}

    def raw(self, key: Key) -> Item | None:
        """The stored item, even past its ttl (a condition sees what DynamoDB sees)."""
        row = self._rows.get(key)
        return None if row is None else dict(row)

    def live(self, key: Key, now: float | None = None) -> Item | None:
        """The item, or None when it is missing or its ttl has passed."""
        row = self.raw(key)
        return row if visible(row, self.now() if now is None else now) else None

    def put(self, item: Item) -> None:
        codec.check_size(item)
        self._rows[(item["pk"], item["sk"])] = dict(item)

    def between(self, pk: str, low: str, high: str) -> list[Item]:
        """Visible items of one partition with ``low <= sk <= high``, by sort key."""
        now = self.now()
        rows = [
            dict(row)
            for (p, s), row in self._rows.items()
            if p == pk and low <= s <= high and visible(row, now)
        ]
        return sorted(rows, key=lambda row: row["sk"])

    def indexed(
        self, partition: str, upper: str = "\uffff", *, index: str, lower: str = ""
    ) -> list[Item]:
        """Visible items of a sparse index partition with ``lower < sort key < upper``."""
        now = self.now()
        pk_name, sk_name = f"{index}pk", f"{index}sk"
        rows = [
            dict(row)
            for row in self._rows.values()
            if row.get(pk_name) == partition and lower < row[sk_name] < upper and visible(row, now)
        ]
        return sorted(rows, key=lambda row: row[sk_name])

    def put_new(self, items: list[Item]) -> bool:
        """Put ``items`` if none of them exists (or all of those that do have expired)."""
        if any(self.live((item["pk"], item["sk"])) for item in items):
            return False
        for item in items:
            self.put(item)
        return True


class MemorySessions:
    """Sessions and their logs."""

    def __init__(self, items: _Items, coder: Codec, *, page_size: int = 100) -> None:
        self._items = items
        self._codec = coder
        self._page_size = page_size

    def load(self, session_id: str) -> SessionRecord | None:
        """The session, or None (also when its retention has passed)."""
        with self._items.lock:
            item = self._items.live(codec.session_key(session_id))
            return None if item is None else self._codec.decode(item, SessionRecord)

    def claim(
        self,
        fresh: SessionRecord,
        *,
        purpose: ClaimFor,
        owner: str,
        until: float,
        now: float,
        pending_id: str | None = None,
    ) -> SessionRecord:
        """Take the session's lease; ``fresh`` is stored when the session is new."""
        key = codec.session_key(fresh.session_id)
        with self._items.lock:
            item = self._items.live(key, now)
            current = None if item is None else self._codec.decode(item, SessionRecord)
            if not rules.claimable(current, purpose, owner, now, pending_id):
                raise rules.claim_refusal(fresh.session_id, current)
            claimed = self._codec.encode(fresh) if item is None else item
            attrs = rules.claim_attrs(
                session_id=fresh.session_id, purpose=purpose, owner=owner, until=until, now=now
            )
            claimed.update(attrs)
            self._items.put(claimed)
            return self._codec.decode(claimed, SessionRecord)

    def commit(self, commit: Commit, *, owner: str) -> None:
        """Write ``commit`` atomically, if ``owner`` still holds the lease."""
        session = rules.committed_session(commit, owner)
        with self._items.lock:
            stored = self._items.raw(codec.session_key(session.session_id))
            # the lease is still ours (nobody took it over after it ran out)
            if stored is None or stored.get("lease_owner") != owner:
                raise LeaseLost(session.session_id)
            new: list[SessionRecord | LogChunk | PendingItem] = [session]
            new += [record for record in (commit.chunk, commit.pending) if record is not None]
            # what the step adds is new: a second writer of the same chunk lost the race
            if any(self._items.live(codec.key_of(record)) for record in new[1:]):
                raise LeaseLost(session.session_id)
            # encode everything first: a refused item must leave nothing written
            items = [self._codec.encode(record) for record in [*new, *commit.outbox]]
            items += [self._codec.encode(entry) for entry in commit.audit]
            for item in items:
                self._items.put(item)

    def stalled(self, before: float, *, limit: int = 100) -> list[SessionRecord]:
        """Running sessions whose lease ran out by ``before``, longest stalled first."""
        partition, upper = codec.stalled_before(before)
        with self._items.lock:
            rows = self._items.indexed(partition, upper, index="gsi3")
            found = [self._codec.decode(row, SessionRecord) for row in rows]
        return [record for record in found if rules.stalled(record, before)][:limit]

    def read_log(self, session_id: str, *, from_seq: int = 0) -> Iterator[LogChunk]:
        """The session's log chunks from ``from_seq`` on, in order, paging as it goes."""
        pk, low, high = codec.chunk_range(session_id, from_seq)
        while True:
            with self._items.lock:
                page = self._items.between(pk, low, high)[: self._page_size]
                chunks = [self._codec.decode(item, LogChunk) for item in page]
            yield from chunks
            if len(page) < self._page_size:
                return
            # the next page starts right after the last key read, like ExclusiveStartKey
            low = page[-1]["sk"] + "\x00"


class MemoryPendingItems:
    """Approvals and questions waiting for a human."""

    def __init__(self, items: _Items, coder: Codec, *, page_size: int = 100) -> None:
        self._items = items
        self._codec = coder
        self._page_size = page_size

    def get(self, pending_id: str) -> PendingItem | None:
        """The item, or None (also when its retention has passed)."""
        with self._items.lock:
            item = self._items.live(codec.pending_key(pending_id))
            return None if item is None else self._codec.decode(item, PendingItem)

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
        """Move a pending item to ``status`` and record ``audit``, together, under the lock."""
        # encoded first: an entry that cannot be stored leaves the item as it was
        entry = self._codec.encode(audit)
        with self._items.lock:
            item = self._items.live(codec.pending_key(pending_id), now)
            current = None if item is None else self._codec.decode(item, PendingItem)
            refusal = rules.resolution_refusal(pending_id, current, status, now)
            if refusal is not None or item is None:
                raise refusal or NotFound("pending item", pending_id)
            item.update(
                rules.resolution_attrs(
                    status=status,
                    actor=actor,
                    channel=channel,
                    now=now,
                    answer=answer,
                    note=note,
                    retain_until=retain_until,
                )
            )
            for name in codec.RESOLUTION_REMOVES:
                item.pop(name, None)
            # both fit and the entry is new, or neither is written
            codec.check_size(item)
            codec.check_size(entry)
            if self._items.live((entry["pk"], entry["sk"])) is not None:
                raise StoreUnavailable(f"audit entry {audit.id} exists; nothing written")
            self._items.put(item)
            self._items.put(entry)
            return self._codec.decode(item, PendingItem)

    def mark_resumed(self, pending_id: str) -> None:
        """Record that the turn was resumed after the resolution."""
        with self._items.lock:
            item = self._items.live(codec.pending_key(pending_id))
            if item is None:
                raise NotFound("pending item", pending_id)
            item["resumed"] = True
            self._items.put(item)

    def due(self, now: float, *, limit: int = 100) -> list[PendingItem]:
        """Pending items whose ``expires_at`` has passed, oldest first."""
        partition, upper = codec.due_before(now)
        with self._items.lock:
            rows = self._items.indexed(partition, upper, index="gsi1")
            items = [self._codec.decode(row, PendingItem) for row in rows]
        return [item for item in items if item.expires_at <= now][:limit]

    def waiting(self, now: float) -> Iterator[PendingItem]:
        """Items still pending and not yet due at ``now``, soonest expiry first."""
        partition, lower = codec.waiting_after(now)
        while True:
            with self._items.lock:
                page = self._items.indexed(partition, index="gsi1", lower=lower)
                page = page[: self._page_size]
                items = [self._codec.decode(row, PendingItem) for row in page]
            yield from (item for item in items if item.expires_at > now)
            if len(page) < self._page_size:
                return
            # the next page starts right after the last key read, like ExclusiveStartKey
            lower = page[-1]["gsi1sk"]

    def note_reminder(self, pending_id: str, count: int, *, now: float) -> PendingItem | None:
        """Record reminder number ``count + 1``; None if it was recorded before or is moot."""
        with self._items.lock:
            item = self._items.live(codec.pending_key(pending_id), now)
            if item is None:
                return None
            if not rules.may_remind(self._codec.decode(item, PendingItem), count, now):
                return None
            item.update(rules.reminder_attrs(count, now))
            self._items.put(item)
            return self._codec.decode(item, PendingItem)


class MemoryOutbox:
    """One notification row per pending item and channel."""

    def __init__(self, items: _Items, coder: Codec) -> None:
        self._items = items
        self._codec = coder

    def rows(self, pending_id: str) -> list[OutboxRow]:
        """Every channel's row of one pending item, by channel name."""
        pk, prefix = codec.outbox_prefix(pending_id)
        with self._items.lock:
            rows = self._items.between(pk, prefix, prefix + "\uffff")
            return [self._codec.decode(row, OutboxRow) for row in rows]

    def add(self, rows: list[OutboxRow]) -> bool:
        """Write new rows all together; False, writing nothing, if one of them exists."""
        items = [self._codec.encode(row) for row in rows]
        with self._items.lock:
            return self._items.put_new(items)

    def claim(
        self, pending_id: str, channel: str, *, owner: str, until: float, now: float
    ) -> OutboxRow | None:
        """Take the row's send lock and count the attempt; None if it is not sendable."""
        with self._items.lock:
            item = self._row(pending_id, channel)
            row = self._codec.decode(item, OutboxRow)
            if not rules.sendable(row, owner=owner, now=now):
                return None
            item.update(lock_owner=owner, lock_until=until, attempts=row.attempts + 1)
            self._items.put(item)
            return self._codec.decode(item, OutboxRow)

    def mark_sent(
        self, pending_id: str, channel: str, *, at: float, receipt: dict[str, str] | None = None
    ) -> None:
        """Record ``notified_at``; only after the channel accepted the send."""
        with self._items.lock:
            item = self._row(pending_id, channel)
            item["notified_at"] = at
            if receipt:
                item["receipt"] = dict(receipt)
            for name in codec.SETTLED_REMOVES:
                item.pop(name, None)
            self._items.put(item)

    def mark_failed(self, pending_id: str, channel: str, *, reason: str) -> None:
        """Give the row up for good, with its reason."""
        with self._items.lock:
            item = self._row(pending_id, channel)
            item.update(failed=True, last_error=reason)
            for name in codec.SETTLED_REMOVES:
                item.pop(name, None)
            self._items.put(item)

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
        with self._items.lock:
            item = self._row(pending_id, channel)
            if item.get("lock_owner") != owner:
                return
            item["last_error"] = error
            if receipt:
                item["receipt"] = dict(receipt)
            for name in codec.LOCK_REMOVES:
                item.pop(name, None)
            self._items.put(item)

    def _row(self, pending_id: str, channel: str) -> dict[str, Any]:
        item = self._items.live(codec.outbox_key(pending_id, channel))
        if item is None:
            raise NotFound("outbox row", f"{pending_id}/{channel}")
        return item

    def unsent(self, *, created_before: float, limit: int = 100) -> list[OutboxRow]:
        """Rows never sent (and not failed for good), oldest first."""
        partition, upper = codec.unsent_before(created_before)
        with self._items.lock:
            rows = self._items.indexed(partition, upper, index="gsi2")
            found = [self._codec.decode(row, OutboxRow) for row in rows]
        return [row for row in found if row.created_at < created_before][:limit]


class MemoryAudit:
    """Who decided what, per session."""

    def __init__(self, items: _Items, coder: Codec) -> None:
        self._items = items
        self._codec = coder

    def record(self, entries: list[AuditEntry]) -> None:
        """Append ``entries``."""
        with self._items.lock:
            for item in [self._codec.encode(entry) for entry in entries]:
                self._items.put(item)

    def for_subject(self, subject: str) -> list[AuditEntry]:
        """Every entry about one session, oldest first."""
        pk = codec.audit_key(subject, 0.0, "")[0]
        with self._items.lock:
            rows = self._items.between(pk, "", "\uffff")
            return [self._codec.decode(row, AuditEntry) for row in rows]


class MemoryApiKeys:
    """API keys by hash, by key id and in one listing, as the DynamoDB adapter keeps them."""

    def __init__(self, items: _Items, coder: Codec) -> None:
        self._items = items
        self._codec = coder

    def add(self, key: ApiKey) -> None:
        """Store a new key; its three items are written together or not at all."""
        items = codec.api_key_items(self._codec, key)
        with self._items.lock:
            if any(self._items.live((item["pk"], item["sk"])) for item in items):
                raise rules.api_key_taken(key)
            for item in items:
                self._items.put(item)

    def find(self, key_hash: str) -> ApiKey | None:
        """The key with that hash, revoked ones included."""
        with self._items.lock:
            item = self._items.live(codec.api_key_key(key_hash))
            return None if item is None else self._codec.decode(item, ApiKey)

    def revoke(self, key_id: str, *, at: float) -> ApiKey:
        """Mark the key revoked at ``at``; a key revoked before keeps its first time."""
        with self._items.lock:
            item = self._items.live(codec.api_key_id_key(key_id))
            if item is None:
                raise NotFound("API key", key_id)
            current = self._codec.decode(item, ApiKey)
            updated = rules.revoked(current, at)
            if updated is not current:
                for row in codec.api_key_items(self._codec, updated):
                    self._items.put(row)
            return updated

    # last in the class: below it, ``list`` in an annotation would name this method
    def list(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (or one tenant's), by tenant then key id."""
        pk, prefix = codec.api_key_listing(tenant)
        with self._items.lock:
            rows = self._items.between(pk, prefix, prefix + "\uffff")
            keys = [self._codec.decode(row, ApiKey) for row in rows]
        # a tenant whose name holds "#" shares a prefix with another one: match exactly
        return [key for key in keys if tenant is None or key.tenant == tenant]


class MemoryStore:
    """Every store port over one dict of items and one lock."""

    def __init__(self, *, clock: Clock | None = None, page_size: int = 100) -> None:
        wall = clock or SystemClock()
        self.lock = threading.RLock()
        self.blobs = MemoryBlobs(lock=self.lock)
        items = _Items(self.lock, lambda: wall.now().timestamp())
        coder = Codec(self.blobs)
        self.sessions = MemorySessions(items, coder, page_size=page_size)
        self.pending = MemoryPendingItems(items, coder, page_size=page_size)
        self.outbox = MemoryOutbox(items, coder)
        self.audit = MemoryAudit(items, coder)
        self.api_keys = MemoryApiKeys(items, coder)
