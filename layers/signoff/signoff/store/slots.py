"""Run slots over a ``Table``: at most N holders of a scope at once, each slot a lease.

A scope (the deployment, or one tenant) has ``size`` slot items under one
partition, ``RUN#<scope>`` / ``<number>``. Taking a slot is one conditional put
on a slot that is missing, given back, or whose lease ran out — so two takers
never hold one slot, and a holder whose process died frees its slot when its
lease ends. One query reads the scope's slots first, so a full scope costs a
read, not ``size`` refused writes. Giving a slot back is one conditional update
that only its holder's token passes (a slot taken over after its lease ran out
stays with its new holder).
"""

from __future__ import annotations

import math
import random
from typing import Final

from signoff.store.stored import Stored
from signoff.store.table import Attr, ConditionFailed, Index, Update

__all__ = ["SLOT_RETENTION", "TableSlots"]

_KEY: Final = Index(None, "pk", "sk")
_HOLDER, _UNTIL = Attr("holder"), Attr("until")
# A scope nobody ran in for a day (a tenant gone quiet) leaves the table.
SLOT_RETENTION: Final = 86400.0


def _partition(scope: str) -> str:
    return f"RUN#{scope}"


def _sort(number: int) -> str:
    return f"{number:04d}"


class TableSlots(Stored):
    """The ``Slots`` port: numbered leases per scope, taken and given back by conditional writes."""

    def take(self, scope: str, size: int, *, holder: str, until: float, now: float) -> str | None:
        """Take a free slot of ``scope``'s ``size`` for ``holder`` until ``until``.

        Returns:
            The slot taken (give it back with ``give_back``), or None: all ``size``
            are held by live leases.
        """
        partition = _partition(scope)
        held = self._held(scope, now)
        free = [_sort(n) for n in range(size) if _sort(n) not in held]
        # Takers that read the same free slots spread over them instead of all
        # racing for the first one.
        random.shuffle(free)
        # The read may be stale (an index-free query, but another taker may have
        # written since): the conditional put decides.
        free_now = _HOLDER.missing() | _UNTIL.le(now)
        for slot in free:
            item = {
                "pk": partition,
                "sk": slot,
                "holder": holder,
                "until": until,
                "ttl": math.ceil(until + SLOT_RETENTION),
            }
            try:
                self._items.put(item, condition=free_now)
            except ConditionFailed:
                continue
            return slot
        return None

    def give_back(self, scope: str, slot: str, *, holder: str) -> None:
        """Free ``slot`` if ``holder`` still holds it; otherwise leave it to its new holder."""
        update = Update(
            (_partition(scope), slot),
            remove=("holder", "until"),
            condition=_HOLDER.eq(holder),
        )
        try:
            self._items.update(update)
        except ConditionFailed:
            return  # its lease ran out and another turn took it: that one gives it back

    def held(self, scope: str, *, now: float) -> int:
        """How many of ``scope``'s slots are held by live leases (for operators and tests)."""
        return len(self._held(scope, now))

    def _held(self, scope: str, now: float) -> set[str]:
        """The slots of ``scope`` whose lease is live at ``now``."""
        live = _HOLDER.exists() & _UNTIL.gt(now)
        pages = self._items.query(_partition(scope), index=_KEY)
        return {item["sk"] for page in pages for item in page if live.holds(item)}
