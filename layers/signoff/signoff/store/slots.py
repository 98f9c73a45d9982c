"""Run slots over a ``Table``: at most N holders of a scope at once, each slot a lease.

A scope (the deployment, or one tenant) of ``size`` slots is split into
``ceil(size / POOL_SIZE)`` pools of nearly equal size. A pool is one item,
``RUN#<scope>#<pool>`` / ``POOL``, whose attribute ``s<i>`` is
``<holder>|<until, in ms>`` while its slot ``i`` is held and missing while free.

A take costs the same whatever ``size`` is. It reads two pools drawn at random
(strongly consistent GetItems; one when the scope has one pool) and writes one
slot of the pool with more free slots: one UpdateItem that sets ``s<i>`` only
if it is still missing or still holds the very lease, run out, that the read
saw. So two takers never hold one slot, and a holder whose process died frees
its slot when its lease ends. A pool item stays under 1 KB (a scope longer than
``LONGEST_SCOPE`` bytes is keyed by its digest), so an uncontended take is at
most 2 RRU and 1 WRU. A take that lost a race retries on the pool as the refusal
returned it (``ConditionFailed.item``), with no further read, at most
``ATTEMPTS`` writes in all.

Two random choices keep the pools evenly filled. A take answers None when both
pools it drew are full, which near the cap may happen while another pool still
has a free slot: the cap is never exceeded, and a waiting turn's next poll draws
two pools again (``signoff.durable.slots``). Each turn writes its pool twice (the
take and the give-back), so a pool of K slots whose turns run T seconds takes at
most about 2K/T writes a second, whatever the cap: the load spreads over
``size / K`` partitions.

Giving a slot back is one conditional update that removes ``s<i>`` only while it
names its holder (a slot taken over after its lease ran out stays with its new
holder). Every take sets the pool's ``ttl`` ``SLOT_RETENTION`` past its lease, so
the pools of a scope nobody ran in for a day leave the table.

A changed ``size`` moves the pools' bounds: slots past a pool's new size are no
longer counted, so right after a cap is lowered the holders may exceed it for at
most one lease. The same holds during an upgrade from the layout of one item per
slot (``RUN#<scope>`` / ``0000``): nothing reads those items any more, so their
holders and the new ones together may exceed the cap for at most one lease; the
old items leave with their ttl.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import TYPE_CHECKING, Final

from signoff.store.stored import Stored
from signoff.store.table import Attr, ConditionFailed, Update

if TYPE_CHECKING:
    from signoff.store.table import Condition, Item, Key

__all__ = ["ATTEMPTS", "LONGEST_SCOPE", "POOL_SIZE", "SLOT_RETENTION", "TableSlots"]

# Slots per pool item, at most: 16 leases of a 26-character holder keep the item
# under 1 KB (1 WRU a write), and with the cap sized by Little's law each pool
# takes about 2 x 16 / (seconds a turn runs) writes a second.
POOL_SIZE: Final = 16
# Conditional writes one take tries, lost races included, before it answers None.
ATTEMPTS: Final = 4
# Bytes of a scope written into its pools' keys as it is; a longer one (a tenant
# named in 4-byte characters) is keyed by its digest, so no pool item reaches 1 KB.
LONGEST_SCOPE: Final = 160
# A scope nobody ran in for a day (a tenant gone quiet) leaves the table.
SLOT_RETENTION: Final = 86400.0
_POOL: Final = "POOL"


def _pools(size: int) -> list[int]:
    """How many slots each of a scope's pools has: at most ``POOL_SIZE``, sizes within one."""
    count = -(-size // POOL_SIZE)
    each, larger = divmod(size, count)
    return [each + (pool < larger) for pool in range(count)]


def _key(scope: str, pool: int) -> Key:
    name = scope.encode()
    if len(name) > LONGEST_SCOPE:
        scope = "sha256:" + hashlib.sha256(name).hexdigest()
    return f"RUN#{scope}#{pool}", _POOL


def _slot(index: int) -> Attr:
    return Attr(f"s{index}")


def _lease(holder: str, until: float) -> str:
    # rounded up to the millisecond: a lease never ends before the time it was given
    return f"{holder}|{math.ceil(until * 1000)}"


def _live(lease: str, now: float) -> bool:
    return int(lease.rpartition("|")[2]) > now * 1000


def _free(item: Item | None, slots: int, now: float) -> list[tuple[int, str | None]]:
    """The pool's slots free at ``now``: (index, the run-out lease it still holds, or None)."""
    free: list[tuple[int, str | None]] = []
    for index in range(slots):
        lease = None if item is None else item.get(_slot(index).name)
        if lease is None or not _live(lease, now):
            free.append((index, lease))
    return free


class TableSlots(Stored):
    """The ``Slots`` port: a scope's leases in pool items, taken and given back conditionally."""

    def take(self, scope: str, size: int, *, holder: str, until: float, now: float) -> str | None:
        """Take a free slot of ``scope``'s ``size`` for ``holder`` (a short id) until ``until``.

        Returns:
            The slot taken (give it back with ``give_back``), or None: both pools
            read were full, or every write lost its race.
        """
        if size <= 0:
            return None
        pools = _pools(size)
        drawn = random.sample(range(len(pools)), min(2, len(pools)))
        read = [(pool, self._items.get(_key(scope, pool))) for pool in drawn]
        # the emptier pool first: two choices keep the pools evenly filled
        read.sort(key=lambda found: len(_free(found[1], pools[found[0]], now)), reverse=True)
        mine = _lease(holder, until)
        attempts = ATTEMPTS
        for pool, item in read:
            current = item
            while attempts > 0:
                free = _free(current, pools[pool], now)
                if not free:
                    break
                # takers that read the same pool spread over its free slots
                index, ran_out = random.choice(free)
                attempts -= 1
                update = Update(
                    _key(scope, pool),
                    set_attrs={_slot(index).name: mine, "ttl": math.ceil(until + SLOT_RETENTION)},
                    condition=_still_free(index, ran_out),
                )
                try:
                    self._items.update(update)
                except ConditionFailed as refused:
                    current = refused.item  # the pool as the refused write saw it
                    continue
                return f"{pool}.{index}"
        return None

    def give_back(self, scope: str, slot: str, *, holder: str) -> None:
        """Free ``slot`` if ``holder`` still holds it; otherwise leave it to its new holder."""
        pool, _, index = slot.partition(".")
        attribute = _slot(int(index))
        update = Update(
            _key(scope, int(pool)),
            remove=(attribute.name,),
            # the holder's own lease: holders are unique ids, so their prefix names one lease
            condition=attribute.begins_with(f"{holder}|"),
        )
        try:
            self._items.update(update)
        except ConditionFailed:
            return  # its lease ran out and another turn took it: that one gives it back

    def held(self, scope: str, size: int, *, now: float) -> int:
        """How many of ``scope``'s ``size`` slots are held by live leases (reads every pool).

        For operators and tests: it costs a read per pool, ``size / POOL_SIZE``.
        """
        if size <= 0:
            return 0
        pools = _pools(size)
        return sum(
            slots - len(_free(self._items.get(_key(scope, pool)), slots, now))
            for pool, slots in enumerate(pools)
        )


def _still_free(index: int, ran_out: str | None) -> Condition:
    """The slot is as the take read it: missing, or holding the same lease, run out."""
    slot = _slot(index)
    # missing: free, given back, or never taken (the pool item itself may be missing)
    free = slot.missing()
    # the run-out lease it read, unchanged: no other taker took it over since
    return free if ran_out is None else free | slot.eq(ran_out)
