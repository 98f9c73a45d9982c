"""Contract of the Slots port (``signoff.store.slots``): leases in pools, at most ``size`` held.

Run against the in-memory table and DynamoDB (moto), as every store port is.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from signoff.store.slots import POOL_SIZE

if TYPE_CHECKING:
    from signoff.clock import ManualClock
    from tests.contract.conftest import Store

LEASE = 60.0


def test_a_scope_holds_at_most_size_slots_and_a_slot_given_back_is_taken_again(
    store: Store, t0: float
) -> None:
    taken = [store.slots.take("all", 3, holder=f"h{n}", until=t0 + LEASE, now=t0) for n in range(3)]

    assert None not in taken and len(set(taken)) == 3
    assert store.slots.take("all", 3, holder="h3", until=t0 + LEASE, now=t0) is None
    assert store.slots.held("all", 3, now=t0) == 3

    first = taken[0]
    assert first is not None
    store.slots.give_back("all", first, holder="h0")
    assert store.slots.held("all", 3, now=t0) == 2
    assert store.slots.take("all", 3, holder="h3", until=t0 + LEASE, now=t0) == first
    assert store.slots.take("all", 3, holder="h4", until=t0 + LEASE, now=t0) is None


def test_scopes_are_counted_apart(store: Store, t0: float) -> None:
    assert store.slots.take("tenant#acme", 1, holder="a", until=t0 + LEASE, now=t0) is not None
    assert store.slots.take("tenant#acme", 1, holder="b", until=t0 + LEASE, now=t0) is None
    assert store.slots.take("tenant#globex", 1, holder="c", until=t0 + LEASE, now=t0) is not None
    assert store.slots.held("tenant#acme", 1, now=t0) == 1
    assert store.slots.held("all", 3, now=t0) == 0


def test_a_slot_whose_lease_ran_out_is_free_and_its_old_holder_cannot_free_the_new_one(
    store: Store, clock: ManualClock, t0: float
) -> None:
    crashed = store.slots.take("all", 1, holder="crashed", until=t0 + LEASE, now=t0)
    assert crashed is not None
    clock.advance(LEASE)
    later = t0 + LEASE

    assert store.slots.held("all", 1, now=later) == 0
    again = store.slots.take("all", 1, holder="next", until=later + LEASE, now=later)
    assert again == crashed
    # the holder that died comes back late: the slot stays with the turn that took it over
    store.slots.give_back("all", crashed, holder="crashed")
    assert store.slots.held("all", 1, now=later) == 1
    assert store.slots.take("all", 1, holder="third", until=later + LEASE, now=later) is None


def test_a_smaller_size_counts_only_its_slots(store: Store, t0: float) -> None:
    for n in range(3):
        store.slots.take("all", 3, holder=f"h{n}", until=t0 + LEASE, now=t0)

    # slots 0-2 are held: a cap lowered to 2 is full, one raised to 4 has one more
    assert store.slots.take("all", 2, holder="low", until=t0 + LEASE, now=t0) is None
    assert store.slots.take("all", 4, holder="high", until=t0 + LEASE, now=t0) is not None


def test_racing_takers_never_hold_more_than_size(store: Store, t0: float) -> None:
    def take(n: int) -> str | None:
        return store.slots.take("all", 4, holder=f"h{n}", until=t0 + LEASE, now=t0)

    with ThreadPoolExecutor(max_workers=8) as pool:
        taken = [slot for slot in pool.map(take, range(24)) if slot is not None]

    assert len(taken) == len(set(taken)) == 4
    assert store.slots.held("all", 4, now=t0) == 4


def test_a_scope_of_many_pools_fills_to_its_size_and_no_further(store: Store, t0: float) -> None:
    size = 2 * POOL_SIZE + 8  # three pools
    taken: list[str] = []
    # Given takes that draw two of the three pools, repeated until the scope is full
    for n in range(40 * size):
        slot = store.slots.take("all", size, holder=f"h{n}", until=t0 + LEASE, now=t0)
        if slot is not None:
            taken.append(slot)
        if len(taken) == size:
            break

    # Then every slot was taken once, and a full scope refuses every further take
    assert len(taken) == len(set(taken)) == size
    assert store.slots.held("all", size, now=t0) == size
    refused = [
        store.slots.take("all", size, holder=f"late{n}", until=t0 + LEASE, now=t0)
        for n in range(10)
    ]
    assert refused == [None] * 10


def test_items_of_the_one_item_per_slot_layout_are_not_counted(store: Store, t0: float) -> None:
    # Given a live lease written by the layout before pools (RUN#<scope> / <number>)
    old = {"pk": "RUN#all", "sk": "0000", "holder": "old", "until": t0 + LEASE, "ttl": 0}
    store.table.put(old)

    # Then it runs out on its own: the pools do not count it (at most one lease over the cap)
    assert store.slots.held("all", 1, now=t0) == 0
    assert store.slots.take("all", 1, holder="new", until=t0 + LEASE, now=t0) is not None
    assert store.slots.held("all", 1, now=t0) == 1


def test_fifty_concurrent_takers_never_hold_more_than_size_and_give_their_slots_back(
    store: Store, t0: float
) -> None:
    size, takers, rounds = 3 * 12, 50, 3  # three pools of 12
    lock = threading.Lock()
    in_flight: dict[str, str] = {}
    most = 0
    crashed: list[str] = []

    def run(n: int) -> None:
        nonlocal most
        for turn in range(rounds):
            holder = f"h{n}-{turn}"
            deadline = time.monotonic() + 60
            slot = None
            while slot is None:
                assert time.monotonic() < deadline, "no slot came free"
                slot = store.slots.take("all", size, holder=holder, until=t0 + LEASE, now=t0)
                if slot is None:
                    time.sleep(0.001)
            with lock:
                # no slot is held twice at once, and never more than size are held
                assert slot not in in_flight, (slot, in_flight[slot], holder)
                in_flight[slot] = holder
                most = max(most, len(in_flight))
            time.sleep(0.002)  # the turn runs
            if n % 10 == 0 and turn == rounds - 1:
                with lock:
                    crashed.append(slot)  # its process dies: the slot stays until its lease ends
                return
            with lock:
                del in_flight[slot]
            store.slots.give_back("all", slot, holder=holder)

    with ThreadPoolExecutor(max_workers=takers) as pool:
        list(pool.map(run, range(takers)))

    assert 1 < most <= size
    # every taker that gave its slot back freed it: only the dead ones' slots are held
    assert sorted(in_flight) == sorted(crashed) and len(crashed) == takers // 10
    assert store.slots.held("all", size, now=t0) == len(crashed)
    assert store.slots.held("all", size, now=t0 + LEASE) == 0
