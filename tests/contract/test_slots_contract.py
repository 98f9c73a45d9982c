"""Contract of the Slots port (``signoff.store.slots``): numbered leases, at most ``size`` held.

Run against the in-memory table and DynamoDB (moto), as every store port is.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

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
    assert store.slots.held("all", now=t0) == 3

    first = taken[0]
    assert first is not None
    store.slots.give_back("all", first, holder="h0")
    assert store.slots.held("all", now=t0) == 2
    assert store.slots.take("all", 3, holder="h3", until=t0 + LEASE, now=t0) == first
    assert store.slots.take("all", 3, holder="h4", until=t0 + LEASE, now=t0) is None


def test_scopes_are_counted_apart(store: Store, t0: float) -> None:
    assert store.slots.take("tenant#acme", 1, holder="a", until=t0 + LEASE, now=t0) is not None
    assert store.slots.take("tenant#acme", 1, holder="b", until=t0 + LEASE, now=t0) is None
    assert store.slots.take("tenant#globex", 1, holder="c", until=t0 + LEASE, now=t0) is not None
    assert store.slots.held("tenant#acme", now=t0) == 1
    assert store.slots.held("all", now=t0) == 0


def test_a_slot_whose_lease_ran_out_is_free_and_its_old_holder_cannot_free_the_new_one(
    store: Store, clock: ManualClock, t0: float
) -> None:
    crashed = store.slots.take("all", 1, holder="crashed", until=t0 + LEASE, now=t0)
    assert crashed is not None
    clock.advance(LEASE)
    later = t0 + LEASE

    assert store.slots.held("all", now=later) == 0
    again = store.slots.take("all", 1, holder="next", until=later + LEASE, now=later)
    assert again == crashed
    # the holder that died comes back late: the slot stays with the turn that took it over
    store.slots.give_back("all", crashed, holder="crashed")
    assert store.slots.held("all", now=later) == 1
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
    assert store.slots.held("all", now=t0) == 4
