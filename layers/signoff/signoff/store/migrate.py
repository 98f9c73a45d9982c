"""Moving items the previous release indexed onto this release's keys.

The previous release swept three constant partitions of three indexes
(``keys.LEGACY_PARTITIONS``). Every write of this release drops those keys, so
what still carries them was written before the upgrade and not touched since.
``Migrator.rewrite`` gives one such item its sweep key (``Codec.index_attrs``)
and drops its old keys in one conditional update that holds only while the old
key is as read: an item a newer writer moved meanwhile is left alone. A
rewritten item leaves the partition it was found in, so draining the
partitions again resumes an interrupted run, and a second full run finds
nothing. The sweep's ``legacy`` task and ``signoff migrate`` both use it.

The by-tenant and gated-sessions listings need no move: their shard 0 is the
previous release's partition (``keys.sharded``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol

from signoff.store import keys, rules
from signoff.store.pending_records import OutboxRow, PendingItem
from signoff.store.session_records import SessionRecord
from signoff.store.stored import rows
from signoff.store.table import Attr, ConditionFailed, Update

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from signoff.store.codec import Codec
    from signoff.store.table import Index, Item, Table

__all__ = ["LEGACY_PARTITIONS", "Migrator", "migrator_for"]

LEGACY_PARTITIONS: Final = keys.LEGACY_PARTITIONS

_MODELS: Final[dict[str, type[PendingItem | OutboxRow | SessionRecord]]] = {
    "pending": PendingItem,
    "outbox": OutboxRow,
    "session": SessionRecord,
}


class Migrator:
    """Rewrites items carrying the previous release's index keys with this release's.

    ``remind_after`` gives an agent's ``remindAfter`` (None: none, or the agent is
    gone): an item paused before this release did not record it, and its next
    reminder is part of when the sweep reads it next.
    """

    def __init__(
        self,
        table: Table,
        coder: Codec,
        *,
        now: Callable[[], float],
        remind_after: Callable[[str], float | None] = lambda agent: None,
    ) -> None:
        self._table = table
        self._codec = coder
        self._now = now
        self._remind_after = remind_after

    def pages(self, index: Index, partition: str) -> Iterator[list[Item]]:
        """The items ``index`` still lists under ``partition``, page by page, as read.

        Rewritten items leave the partition, so a fresh call after an interruption
        reads only what is left.
        """
        return self._table.query(partition, index=index)

    def items(self) -> Iterator[Item]:
        """Every item of every legacy partition, one by one."""
        for index, partition in LEGACY_PARTITIONS:
            yield from rows(self.pages(index, partition))

    def rewrite(self, item: Item, *, dry_run: bool = False) -> bool:
        """Give ``item`` its sweep key and drop its old ones.

        Returns:
            True when the item was (``dry_run``: would be) rewritten; False when it
            carries no old key or a newer writer moved it since it was read.
        """
        old = [(pk, sk) for pk, sk in _PAIRS if pk in item and sk in item]
        model = _MODELS.get(str(item.get("kind")))
        if not old or model is None:
            return False
        attrs: Item = {}
        record: PendingItem | OutboxRow | SessionRecord = self._codec.decode(item, model)
        if isinstance(record, PendingItem) and record.remind_after is None:
            remind = self._remind_after(record.agent)
            if remind is not None:
                attrs["remind_after"] = remind
                record = record.model_copy(update=attrs)
        attrs |= self._codec.index_attrs(record)
        if dry_run:
            return True
        # holds only while every old key is as read: nobody rewrote the item since
        unchanged = rules.live(self._now())
        for _, sk in old:
            unchanged = unchanged & Attr(sk).eq(item[sk])
        removes = tuple(name for pair in old for name in pair)
        update = Update((item["pk"], item["sk"]), attrs, removes, unchanged)
        try:
            self._table.update(update)
        except ConditionFailed:
            return False
        return True


_PAIRS: Final = (("gsi1pk", "gsi1sk"), ("gsi2pk", "gsi2sk"), ("gsi3pk", "gsi3sk"))


class _Store(Protocol):
    """What a migrator needs of a store (``DynamoStore``, ``MemoryStore``)."""

    @property
    def table(self) -> Table: ...

    @property
    def codec(self) -> Codec: ...

    def now(self) -> float: ...


def migrator_for(
    store: _Store, remind_after: Callable[[str], float | None] = lambda agent: None
) -> Migrator:
    """A migrator over ``store``'s table, on its clock."""
    return Migrator(store.table, store.codec, now=store.now, remind_after=remind_after)
