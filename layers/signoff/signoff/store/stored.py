"""What every port class over a ``Table`` shares: the table, the codec and the clock."""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.store import keys, rules
from signoff.store.table import Attr

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from signoff.store.codec import Codec, R
    from signoff.store.table import Condition, Index, Item, Table

__all__ = ["Stored", "rows"]


def rows(pages: Iterable[list[Item]]) -> Iterator[Item]:
    """The items of query pages, one by one, fetched as the caller iterates."""
    for page in pages:
        yield from page


class Stored:
    """A port's table (``_items``: tests read it raw, as a scan reads DynamoDB), codec and clock."""

    def __init__(self, table: Table, coder: Codec, *, now: Callable[[], float]) -> None:
        self._items = table
        self._codec = coder
        self._now = now

    def _read(self, item: Item | None, model: type[R], now: float | None = None) -> R | None:
        """The record ``item`` holds, or None when it is missing or past its retention."""
        if item is None or not rules.live(self._now() if now is None else now).holds(item):
            return None
        return self._codec.decode(item, model)

    def _found(
        self, pages: Iterable[list[Item]], model: type[R], keep: Condition | None = None
    ) -> Iterator[R]:
        """The live records of query pages that meet ``keep``, decoded as the pages arrive."""
        return self._decoded(rows(pages), model, keep)

    def _decoded(
        self, items: Iterable[Item], model: type[R], keep: Condition | None = None
    ) -> Iterator[R]:
        """The live records among ``items`` that meet ``keep``, decoded as they arrive."""
        # one reading of the clock for the whole read, as one query is one moment
        live = rules.live(self._now())
        for item in items:
            # an index is eventually consistent: recheck what it returned
            if live.holds(item) and (keep is None or keep.holds(item)):
                yield self._codec.decode(item, model)

    def _swept(self, family: str, shard: int, upper: str) -> Iterator[Item]:
        """The items of one sweep-index partition whose sort key is below ``upper``,
        oldest first, paged lazily.

        The index holds only keys: each item is read from the table (strongly
        consistent), and one whose key has moved out since the index was written
        is left out.
        """
        index = keys.SWEEP_INDEX
        partition = keys.sweep_partition(family, shard)
        pages = self._items.query(partition, Attr(index.sk).lt(upper), index=index)
        for page in pages:
            for entry in page:
                item = self._items.get((entry["pk"], entry["sk"]))
                moved = item is None or item.get(index.pk) != partition
                if not moved and item is not None and item.get(index.sk, upper) < upper:
                    yield item

    def _legacy(self, index: Index, partition: str, upper: str | None) -> Iterator[Item]:
        """Items the previous release's ``index`` still lists under ``partition`` (below
        ``upper``, if given), read from the index itself (it projected everything)."""
        sort = None if upper is None else Attr(index.sk).lt(upper)
        return rows(self._items.query(partition, sort, index=index))

    def _shards(self) -> range:
        return range(self._codec.shards.sweep)
