"""The in-memory ``Table`` and blobs, and every store port over them.

``MemoryTable`` holds the same item dicts as DynamoDB and applies the same
condition values (``signoff.store.rules``) under one lock, so a write and its
check are one step, as DynamoDB applies each request. The ports are the very
classes the DynamoDB store uses; only the primitives differ.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from signoff.clock import SystemClock
from signoff.errors import NotFound
from signoff.store.codec import Codec, check_size
from signoff.store.table import ConditionFailed, Put, Update
from signoff.store.table_ports import TablePorts

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from signoff.clock import Clock
    from signoff.store.keys import Shards
    from signoff.store.table import Condition, Index, Item, Key

__all__ = ["MemoryBlobs", "MemoryStore", "MemoryTable"]


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


class MemoryTable:
    """A ``Table`` in a dict; items past their ttl stay, as DynamoDB deletes them lazily."""

    def __init__(self, *, lock: threading.RLock | None = None, page_size: int = 100) -> None:
        self.lock = lock or threading.RLock()
        self.page_size = page_size
        self._rows: dict[Key, Item] = {}
        # (partition attribute, value) -> the keys of the items in that partition, for
        # every attribute named like a partition key (the table's and each index's):
        # a query reads its partition, not the whole table.
        self._partitions: dict[tuple[str, Any], set[Key]] = {}

    def get(self, key: Key) -> Item | None:
        """The stored item, even past its ttl."""
        with self.lock:
            row = self._rows.get(key)
            return None if row is None else dict(row)

    def put(self, item: Item, *, condition: Condition | None = None) -> None:
        """Write a whole item, if ``condition`` holds for the one it replaces."""
        self.transact([Put(item, condition)])

    def update(self, update: Update) -> Item:
        """Apply ``update`` if its condition holds; the item afterwards."""
        with self.lock:
            self.transact([update])
            return dict(self._rows[update.key])

    def transact(self, writes: Sequence[Put | Update]) -> None:
        """Check every condition, then apply every write: all of them or none."""
        with self.lock:
            after: list[Item] = []
            for number, write in enumerate(writes):
                key = (write.item["pk"], write.item["sk"]) if isinstance(write, Put) else write.key
                current = self._rows.get(key)
                if write.condition is not None and not write.condition.holds(current):
                    raise ConditionFailed(None if current is None else dict(current), write=number)
                after.append(dict(write.item) if isinstance(write, Put) else write.apply(current))
            for item in after:
                # DynamoDB refuses an oversized item: so does this table, writing nothing
                check_size(item)
            for item in after:
                key = (item["pk"], item["sk"])
                self._place(key, self._rows.get(key), item)
                self._rows[key] = item

    def _place(self, key: Key, before: Item | None, after: Item) -> None:
        for name, value in (before or {}).items():
            if name.endswith("pk") and after.get(name) != value:
                self._partitions.get((name, value), set()).discard(key)
        for name, value in after.items():
            if name.endswith("pk") and isinstance(value, str):
                self._partitions.setdefault((name, value), set()).add(key)

    def query(
        self,
        partition: str,
        sort: Condition | None = None,
        *,
        index: Index,
        limit: int | None = None,
        descending: bool = False,
    ) -> Iterator[list[Item]]:
        """Items of one partition of ``index`` whose sort key meets ``sort``, page by page."""
        size = limit or self.page_size
        after: tuple[str, str, str] | None = None
        while True:
            with self.lock:
                keys = self._partitions.get((index.pk, partition), set())
                rows = [
                    dict(row)
                    for row in (self._rows[key] for key in keys)
                    if row.get(index.pk) == partition
                    and index.sk in row
                    and (sort is None or sort.holds(row))
                ]

            def place(row: Item) -> tuple[str, str, str]:
                return row[index.sk], row["pk"], row["sk"]

            # the next page starts right after the last key read, like ExclusiveStartKey
            page = sorted(
                (
                    row
                    for row in rows
                    if after is None or (place(row) < after if descending else place(row) > after)
                ),
                key=place,
                reverse=descending,
            )
            page = page[:size]
            yield page
            if len(page) < size:
                return
            after = place(page[-1])

    def scan(self, keep: Condition | None = None) -> Iterator[list[Item]]:
        """Every item meeting ``keep``, by key, page by page."""
        with self.lock:
            rows = sorted(
                (dict(row) for row in self._rows.values() if keep is None or keep.holds(row)),
                key=lambda row: (row["pk"], row["sk"]),
            )
        for start in range(0, len(rows), self.page_size):
            yield rows[start : start + self.page_size]
        if not rows:
            yield []


class MemoryStore(TablePorts):
    """Every store port over one ``MemoryTable``, with large values in ``MemoryBlobs``."""

    table: MemoryTable

    def __init__(
        self, *, clock: Clock | None = None, page_size: int = 100, shards: Shards | None = None
    ) -> None:
        wall = clock or SystemClock()
        self.lock = threading.RLock()
        self.blobs = MemoryBlobs(lock=self.lock)
        self.table = MemoryTable(lock=self.lock, page_size=page_size)

        def now() -> float:
            return wall.now().timestamp()

        super().__init__(Codec(self.blobs, shards=shards), now=now)
