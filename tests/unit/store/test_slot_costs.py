"""What run slots cost (``signoff.store.slots``): the same few units a take, whatever the cap.

Each request to the table is counted and metered as DynamoDB meters it: a
strongly consistent GetItem is 1 RRU per 4 KB of the item (1 for a missing one),
a write 1 WRU per 1 KB of the larger of the item before and after it (a refused
conditional write too), item sizes from ``codec.item_size``.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from signoff.ids import new_id
from signoff.store.codec import Codec, item_size
from signoff.store.memory import MemoryBlobs, MemoryTable
from signoff.store.slots import LONGEST_SCOPE, POOL_SIZE, TableSlots
from signoff.store.table import ConditionFailed

if TYPE_CHECKING:
    from signoff.store.table import Item, Key, Update

T0 = 1_767_225_600.0
LEASE = 900.0


@dataclass(frozen=True)
class Request:
    operation: str
    key: Key
    rru: int = 0
    wru: int = 0


class MeteredTable:
    """A ``MemoryTable`` that logs each request with the capacity DynamoDB would meter."""

    def __init__(self) -> None:
        self.inner = MemoryTable()
        self.page_size = self.inner.page_size
        self.log: list[Request] = []

    def get(self, key: Key) -> Item | None:
        item = self.inner.get(key)
        units = max(1, math.ceil(item_size(item or {}) / 4096))
        self.log.append(Request("GetItem", key, rru=units))
        return item

    def update(self, update: Update) -> Item:
        before = self.inner.get(update.key)
        try:
            after = self.inner.update(update)
        except ConditionFailed:
            after = update.apply(before)  # refused: metered on the larger image all the same
            raise
        finally:
            largest = max(item_size(before or {}), item_size(after))
            units = max(1, math.ceil(largest / 1024))
            self.log.append(Request("UpdateItem", update.key, wru=units))
        return after

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"run slots use GetItem and UpdateItem only, not {name}")


def slots_over(table: MeteredTable) -> TableSlots:
    return TableSlots(table, Codec(MemoryBlobs()), now=lambda: T0)  # type: ignore[arg-type]


def fill(slots: TableSlots, scope: str, size: int, share: float) -> list[tuple[str, str]]:
    """Take ``share`` of the scope's slots; (slot, holder) of each."""
    taken: list[tuple[str, str]] = []
    while len(taken) < share * size:
        holder = new_id()
        slot = slots.take(scope, size, holder=holder, until=T0 + LEASE, now=T0)
        if slot is not None:
            taken.append((slot, holder))
    return taken


@pytest.mark.parametrize("cap", [10, 1_000, 10_000])
def test_a_take_costs_at_most_2_rru_and_1_wru_whatever_the_cap(cap: int) -> None:
    table = MeteredTable()
    slots = slots_over(table)
    scope = "tenant#" + "t" * 128  # the longest tenant name a hook may choose
    # Given a scope 90% full
    running = fill(slots, scope, cap, 0.9)
    rng = random.Random(cap)
    takes = []
    for _ in range(200):
        # When turns end and start, one each
        slot, holder = running.pop(rng.randrange(len(running)))
        table.log.clear()
        slots.give_back(scope, slot, holder=holder)
        (given,) = table.log
        assert given.operation == "UpdateItem" and given.wru == 1
        table.log.clear()
        holder = new_id()
        taken = slots.take(scope, cap, holder=holder, until=T0 + LEASE, now=T0)
        if taken is not None:
            running.append((taken, holder))
        takes.append(list(table.log))

    # Then each take read at most two pool items and wrote at most one, each one unit
    for take in takes:
        reads = [r for r in take if r.operation == "GetItem"]
        writes = [r for r in take if r.operation == "UpdateItem"]
        assert len(reads) == (1 if cap <= POOL_SIZE else 2) and len(writes) <= 1
        assert sum(r.rru for r in reads) <= 2 and sum(w.wru for w in writes) <= 1
    # and nearly every one found a slot: the writes were measured, not skipped
    assert sum(1 for take in takes if any(r.operation == "UpdateItem" for r in take)) > 180


def test_a_full_pool_of_the_longest_scopes_stays_under_1_kb() -> None:
    table = MeteredTable()
    slots = slots_over(table)
    longest = "tenant#" + "t" * (LONGEST_SCOPE - len("tenant#"))
    # the longest scope kept in the key, and a tenant of 512 bytes (keyed by its digest)
    for scope in (longest, "tenant#" + "\U0001f600" * 128):
        taken = fill(slots, scope, POOL_SIZE, 1.0)
        assert len(taken) == POOL_SIZE
        ((pk, _),) = {request.key for request in table.log}
        pool = table.inner.get((pk, "POOL"))
        assert pool is not None and item_size(pool) < 1024
        assert len([name for name in pool if name not in ("pk", "sk", "ttl")]) == POOL_SIZE
        assert all(request.rru + request.wru == 1 for request in table.log)
        table.log.clear()


def test_at_cap_1000_and_2000_turns_a_second_no_pool_takes_100_writes_a_second() -> None:
    table = MeteredTable()
    slots = slots_over(table)
    # Little's law: 2,000 turns a second of 0.4 s keep 800 of the 1,000 slots running
    rate, runs, seconds, cap = 2_000, 0.4, 5, 1_000
    running: list[tuple[float, str, str]] = []
    per_second: Counter[tuple[int, Key]] = Counter()
    reads: Counter[tuple[int, Key]] = Counter()
    refused = 0
    for n in range(rate * seconds):
        now = T0 + n / rate
        while running and running[0][0] <= now:
            _, ended, holder = heapq.heappop(running)
            slots.give_back("all", ended, holder=holder)
        holder = new_id()
        slot = slots.take("all", cap, holder=holder, until=now + LEASE, now=now)
        if slot is None:
            refused += n >= rate  # the first second fills the scope
        else:
            heapq.heappush(running, (now + runs, slot, holder))
        for request in table.log:
            per_second[int(n / rate), request.key] += request.wru
            reads[int(n / rate), request.key] += request.rru
        table.log.clear()

    pools = {key for _, key in per_second}
    assert len(pools) == math.ceil(cap / POOL_SIZE)
    # the first second fills the scope; then it runs steady at ~900 turns
    steady = {k: v for k, v in per_second.items() if k[0] > 0}
    assert max(steady.values()) <= 100, max(steady.values())
    assert max(v for k, v in reads.items() if k[0] > 0) <= 300
    # and at 80% of the cap (almost) no take drew two full pools
    assert refused <= rate * (seconds - 1) / 200
