"""DynamoDB's on-demand capacity rules, as the benchmarks meter them from item sizes.

``bench/aws_cost.py`` (items in DynamoDB's wire form, around moto) and
``bench/capacity.py`` (the store's item dicts: ``MeteringTable`` below, a ``Table``
over ``MemoryTable``) both apply these; each passes its own item-size function.
The indexes are read from ``template.yaml``'s ``SignoffTable`` (key attributes and
projection), so what is metered is what deploys.

The rules, from DynamoDB's developer guide (read/write capacity units; global
secondary indexes' throughput considerations):

- a write costs 1 WRU per KB (rounded up, at least 1) of the larger of the item's
  images before and after it; a write inside a transaction costs twice that; a
  conditional write that is refused still pays that table write;
- a global secondary index is written when the item is in it (has both of its key
  attributes) before or after the write and the write changes its entry there (its
  keys or a projected attribute; for ``KEYS_ONLY`` only the keys): one write of the
  entry's size when the item enters or leaves the index, two (the old entry
  deleted, the new one put) when its index key changes, one when it stays under
  the same key with a projected attribute changed, none when nothing projected
  changed. An entry is the table key, the index key and the projected attributes.
  Index writes are not doubled inside a transaction (only the table's are);
- a read costs 1 RRU per 4 KB (rounded up, at least 1) strongly consistent, half
  that eventually consistent (every index read); a query is charged on the summed
  size of the items (index entries) it returned, at least one unit per page.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from signoff.store.codec import item_size
from signoff.store.table import ConditionFailed, Put, Update

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

    from signoff.store.memory import MemoryTable
    from signoff.store.table import Condition, Index, Key

__all__ = [
    "KEY",
    "PAGE_BYTES",
    "TABLE",
    "GlobalIndex",
    "Meter",
    "MeteringTable",
    "Usage",
    "global_indexes",
    "index_writes",
    "read_units",
    "write_units",
]

KEY: Final = ("pk", "sk")
WRITE_UNIT: Final = 1024
READ_UNIT: Final = 4096
# A Query page stops once it has read 1 MB, whatever its Limit.
PAGE_BYTES: Final = 1024 * 1024
# The table every store port writes (template.yaml).
TABLE_RESOURCE: Final = "SignoffTable"

Item = dict[str, Any]
Projection = Literal["ALL", "KEYS_ONLY", "INCLUDE"]


def write_units(size: int) -> int:
    """WRU of writing an item (or an index entry) of ``size`` bytes once."""
    return max(1, math.ceil(size / WRITE_UNIT))


def read_units(size: int, *, consistent: bool) -> float:
    """RRU of one read (a GetItem, or a query page) of ``size`` bytes."""
    return max(1, math.ceil(size / READ_UNIT)) * (1.0 if consistent else 0.5)


@dataclass(frozen=True)
class GlobalIndex:
    """One global secondary index: its key attributes and what it projects."""

    name: str
    pk: str
    sk: str
    projection: Projection = "ALL"
    include: frozenset[str] = frozenset()

    def holds(self, item: Mapping[str, Any] | None) -> bool:
        """Whether ``item`` is in the index (a sparse index holds items with both keys)."""
        return item is not None and self.pk in item and self.sk in item

    def entry(self, item: Mapping[str, Any]) -> Item:
        """What the index holds of ``item``: the table key, its own key, the projection."""
        if self.projection == "ALL":
            return dict(item)
        kept = (*KEY, self.pk, self.sk, *sorted(self.include))
        return {name: item[name] for name in kept if name in item}


def global_indexes(template: Mapping[str, Any]) -> tuple[GlobalIndex, ...]:
    """The indexes ``template`` gives ``SignoffTable``, in its order."""
    table = template["Resources"][TABLE_RESOURCE]["Properties"]
    found = []
    for spec in table.get("GlobalSecondaryIndexes", []):
        keys = {part["KeyType"]: part["AttributeName"] for part in spec["KeySchema"]}
        projection = spec.get("Projection", {})
        found.append(
            GlobalIndex(
                name=spec["IndexName"],
                pk=keys["HASH"],
                sk=keys["RANGE"],
                projection=projection.get("ProjectionType", "ALL"),
                include=frozenset(projection.get("NonKeyAttributes", [])),
            )
        )
    return tuple(found)


def index_writes(
    index: GlobalIndex,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    size: Callable[[Item], int],
) -> list[tuple[Any, int]]:
    """The writes one table write makes in ``index``: (index partition key value, WRU).

    ``before`` and ``after`` are the item's images (None: missing); ``size`` sizes
    an entry as DynamoDB counts it.
    """
    was, now = index.holds(before), index.holds(after)
    if was and now:
        assert before is not None and after is not None
        old, new = index.entry(before), index.entry(after)
        if before[index.pk] != after[index.pk] or before[index.sk] != after[index.sk]:
            # the key moved: the old entry is deleted, the new one put
            return [
                (before[index.pk], write_units(size(old))),
                (after[index.pk], write_units(size(new))),
            ]
        if old == new:
            return []  # nothing the index projects changed
        return [(after[index.pk], write_units(size(new)))]
    if was:
        assert before is not None
        return [(before[index.pk], write_units(size(index.entry(before))))]
    if now:
        assert after is not None
        return [(after[index.pk], write_units(size(index.entry(after))))]
    return []


# -- a metered Table --------------------------------------------------------------------------

# The label of the table's own partitions (an index's are its name).
TABLE: Final = "table"
Place = tuple[str, str, str]  # (sort key value, pk, sk): an item's order in a partition


@dataclass
class Usage:
    """Units and requests that landed on one partition key value."""

    wru: float = 0.0
    rru: float = 0.0
    writes: int = 0  # item writes (each write of a transaction is one)
    gets: int = 0  # GetItem requests
    pages: int = 0  # Query (and Scan) pages

    def add(self, other: Usage) -> None:
        self.wru += other.wru
        self.rru += other.rru
        self.writes += other.writes
        self.gets += other.gets
        self.pages += other.pages


class Meter:
    """Units by phase (what the workload was doing), index and partition key value."""

    def __init__(self) -> None:
        self.phase = ""
        self.usage: dict[tuple[str, str, str], Usage] = defaultdict(Usage)

    def charge(
        self,
        index: str,
        partition: Any,
        *,
        wru: float = 0.0,
        rru: float = 0.0,
        writes: int = 0,
        gets: int = 0,
        pages: int = 0,
    ) -> None:
        used = self.usage[(self.phase, index, str(partition))]
        used.wru += wru
        used.rru += rru
        used.writes += writes
        used.gets += gets
        used.pages += pages

    def total(self, *phases: str) -> Usage:
        """Everything charged in ``phases`` (all of them when none is named)."""
        found = Usage()
        for (phase, _, _), used in self.usage.items():
            if not phases or phase in phases:
                found.add(used)
        return found

    def by_partition(self, *phases: str) -> dict[tuple[str, str], Usage]:
        """(index, partition key value) → what ``phases`` (all when none) charged there."""
        found: dict[tuple[str, str], Usage] = defaultdict(Usage)
        for (phase, index, partition), used in self.usage.items():
            if not phases or phase in phases:
                found[(index, partition)].add(used)
        return dict(found)

    def reset(self) -> None:
        self.usage.clear()


def _size(item: Item | None) -> int:
    return 0 if item is None else item_size(item)


class _Partition:
    """The keys one partition key value holds, sorted when a query needs them."""

    __slots__ = ("_order", "_sorts", "members")

    def __init__(self) -> None:
        self.members: dict[Key, Place] = {}
        self._order: list[Place] | None = None
        self._sorts: list[str] = []

    def put(self, key: Key, place: Place) -> None:
        if self.members.get(key) != place:
            self.members[key] = place
            self._order = None

    def drop(self, key: Key) -> None:
        if self.members.pop(key, None) is not None:
            self._order = None

    def order(self) -> tuple[list[Place], list[str]]:
        """The places in sort-key order, and their sort key values alone (to bisect)."""
        if self._order is None:
            self._order = sorted(self.members.values())
            self._sorts = [place[0] for place in self._order]
        return self._order, self._sorts


def _window(
    sorts: list[str], condition: Condition | None, attribute: str
) -> tuple[int, int] | None:
    """The slice of ``sorts`` (sorted sort key values) meeting ``condition`` on
    ``attribute``; None when the condition is not one on the sort key alone."""
    if condition is None:
        return 0, len(sorts)
    kind = type(condition).__name__
    if kind == "_All":
        low, high = 0, len(sorts)
        for part in getattr(condition, "parts", ()):
            found = _window(sorts, part, attribute)
            if found is None:
                return None
            low, high = max(low, found[0]), min(high, found[1])
        return low, max(low, high)
    if getattr(condition, "name", None) != attribute:
        return None
    if kind == "_Compare" and isinstance(getattr(condition, "value", None), str):
        value: str = getattr(condition, "value")  # noqa: B009
        return {
            "<": (0, bisect_left(sorts, value)),
            "<=": (0, bisect_right(sorts, value)),
            ">": (bisect_right(sorts, value), len(sorts)),
            ">=": (bisect_left(sorts, value), len(sorts)),
            "=": (bisect_left(sorts, value), bisect_right(sorts, value)),
        }[getattr(condition, "op")]  # noqa: B009
    if kind == "_Between":
        low_value, high_value = getattr(condition, "low"), getattr(condition, "high")  # noqa: B009
        return bisect_left(sorts, low_value), bisect_right(sorts, high_value)
    if kind == "_BeginsWith":
        prefix: str = getattr(condition, "prefix")  # noqa: B009
        return bisect_left(sorts, prefix), bisect_left(sorts, prefix + "\U0010ffff")
    return None


class MeteringTable:
    """A ``Table`` over a ``MemoryTable`` that charges every request's units, by the
    rules above, to the partition key value each lands on: the table's, or an index's
    (both the old and the new one when an index key moves).

    Writes go through the inner table (its conditions, its transactions); queries are
    answered here from a per-partition order of the keys, so a partition of a million
    items is paged as fast as a small one, and an index query returns what the index
    projects (a ``KEYS_ONLY`` index: the keys alone), as DynamoDB does. ``load`` fills
    the table without charge (what was there before the measurement).
    """

    def __init__(self, inner: MemoryTable, indexes: Sequence[GlobalIndex]) -> None:
        self.inner = inner
        self.lock = inner.lock
        self.indexes = {index.name: index for index in indexes}
        self.meter = Meter()
        self._partitions: dict[tuple[str, str], _Partition] = {}
        for page in inner.scan():  # what the inner table held already
            for item in page:
                self._track((item["pk"], item["sk"]), None, item)

    @property
    def page_size(self) -> int:
        return self.inner.page_size

    @page_size.setter
    def page_size(self, size: int) -> None:
        self.inner.page_size = size

    # -- writes ---------------------------------------------------------------------------

    def put(self, item: Item, *, condition: Condition | None = None) -> None:
        """Write a whole item (PutItem)."""
        self._write([Put(item, condition)], transactional=False)

    def update(self, update: Update) -> Item:
        """Apply ``update`` (UpdateItem); the item afterwards."""
        with self.lock:
            self._write([update], transactional=False)
            found = self.inner.get(update.key)
        assert found is not None
        return found

    def transact(self, writes: Sequence[Put | Update]) -> None:
        """Apply every write or none (TransactWriteItems: each item's table write twice)."""
        self._write(writes, transactional=True)

    def load(self, items: Iterable[Item]) -> int:
        """Store ``items`` as they are, charging nothing; how many were stored."""
        count = 0
        with self.lock:
            for item in items:
                key = (item["pk"], item["sk"])
                was = self.inner.get(key)
                self.inner.put(item)
                self._track(key, was, item)
                count += 1
        return count

    def _write(self, writes: Sequence[Put | Update], *, transactional: bool) -> None:
        factor = 2 if transactional else 1
        with self.lock:
            keys = [(w.item["pk"], w.item["sk"]) if isinstance(w, Put) else w.key for w in writes]
            before = [self.inner.get(key) for key in keys]
            try:
                self.inner.transact(writes)
            except ConditionFailed:
                # a refused write still pays its table write (nothing reaches an index)
                for key, write, was in zip(keys, writes, before, strict=True):
                    tried = write.item if isinstance(write, Put) else write.apply(was)
                    units = write_units(max(_size(was), _size(tried))) * factor
                    self.meter.charge(TABLE, key[0], wru=units, writes=1)
                raise
            for key, was in zip(keys, before, strict=True):
                now = self.inner.get(key)
                units = write_units(max(_size(was), _size(now))) * factor
                self.meter.charge(TABLE, key[0], wru=units, writes=1)
                for index in self.indexes.values():
                    for partition, written in index_writes(index, was, now, item_size):
                        self.meter.charge(index.name, partition, wru=written)
                self._track(key, was, now)

    def _track(self, key: Key, before: Item | None, after: Item | None) -> None:
        """Move ``key`` to the partitions ``after`` is in, out of those ``before`` was."""
        if after is None:
            return
        if before is None:
            self._partition(TABLE, key[0]).put(key, (key[1], *key))
        for index in self.indexes.values():
            old = (index.name, before[index.pk]) if before and index.holds(before) else None
            new = (index.name, after[index.pk]) if index.holds(after) else None
            if old is not None and old != new:
                self._partitions[old].drop(key)
            if new is not None:
                self._partition(*new).put(key, (after[index.sk], *key))

    def _partition(self, index: str, value: str) -> _Partition:
        found = self._partitions.get((index, value))
        if found is None:
            found = self._partitions[(index, value)] = _Partition()
        return found

    # -- reads ----------------------------------------------------------------------------

    def get(self, key: Key) -> Item | None:
        """The item (GetItem, strongly consistent: 1 RRU per 4 KB, even when missing)."""
        with self.lock:
            item = self.inner.get(key)
        self.meter.charge(TABLE, key[0], rru=read_units(_size(item), consistent=True), gets=1)
        return item

    def query(
        self,
        partition: str,
        sort: Condition | None = None,
        *,
        index: Index,
        limit: int | None = None,
        descending: bool = False,
    ) -> Iterator[list[Item]]:
        """One partition's items (an index's: its entries) meeting ``sort``, page by page.

        Raises:
            LookupError: ``index`` is not one the template gives the table.
        """
        projected = None
        if index.name is not None:
            projected = self.indexes.get(index.name)
            if projected is None or (projected.pk, projected.sk) != (index.pk, index.sk):
                raise LookupError(f"the code queries index {index}; template.yaml has no such")
        label = TABLE if projected is None else projected.name
        size = limit or self.page_size
        after: Place | None = None
        while True:
            page, read, cut, last = self._page(
                label, partition, sort, index.sk, projected, size, after, descending
            )
            units = read_units(read, consistent=projected is None)
            self.meter.charge(label, partition, rru=units, pages=1)
            yield page
            if not cut and len(page) < size:
                return
            after = last

    def _page(
        self,
        label: str,
        partition: str,
        sort: Condition | None,
        attribute: str,
        projected: GlobalIndex | None,
        size: int,
        after: Place | None,
        descending: bool,
    ) -> tuple[list[Item], int, bool, Place | None]:
        """One page: its items, the bytes read, whether 1 MB cut it short, its last place."""
        with self.lock:
            held = self._partitions.get((label, partition))
            order, sorts = held.order() if held is not None else ([], [])
            window = _window(sorts, sort, attribute)
            if window is None:  # a condition this table cannot bisect: filter every item
                order = [p for p in order if sort is None or sort.holds(self.inner.get(p[1:]))]
                window = (0, len(order))
            low, high = window
            if after is not None:
                if descending:
                    high = min(high, bisect_left(order, after, low, max(low, high)))
                else:
                    low = max(low, bisect_right(order, after, low, max(low, high)))
            if descending:
                chosen = [order[n] for n in range(high - 1, max(low, high - size) - 1, -1)]
            else:
                chosen = order[low : min(high, low + size)]
            page: list[Item] = []
            read = 0
            for place in chosen:
                row = self.inner.get(place[1:])
                assert row is not None
                entry = row if projected is None else projected.entry(row)
                page.append(entry)
                read += item_size(entry)
                if read >= PAGE_BYTES and len(page) < len(chosen):
                    return page, read, True, place
        return page, read, False, chosen[-1] if chosen else None

    def scan(self, keep: Condition | None = None) -> Iterator[list[Item]]:
        """Every item meeting ``keep`` (Scan; charged on what it returns, under ``(scan)``)."""
        for page in self.inner.scan(keep):
            units = read_units(sum(item_size(item) for item in page), consistent=True)
            self.meter.charge(TABLE, "(scan)", rru=units, pages=1)
            yield page
