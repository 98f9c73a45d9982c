"""What every port class over a ``Table`` shares: the table, the codec and the clock."""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.store import rules

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from signoff.store.codec import Codec, R
    from signoff.store.table import Condition, Item, Table

__all__ = ["Stored"]


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
        for page in pages:
            alive = rules.live(self._now())
            for item in page:
                # an index is eventually consistent: recheck what it returned
                if alive.holds(item) and (keep is None or keep.holds(item)):
                    yield self._codec.decode(item, model)
