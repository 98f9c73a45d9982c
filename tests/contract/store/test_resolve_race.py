"""Twenty simultaneous clicks on one pending item: exactly one resolution wins (DESIGN.md §5.1),
and exactly one audit entry, the winner's, is written (§5.8).

DynamoDB applies each conditional write atomically; moto's in-process backend
does not. Measured on moto 5.2.5 with this adapter and a short thread switch
interval: 23 of 40 races had more than one winner, and some calls died inside
moto ("dictionary changed size during iteration"). So the ``aws`` fixture
(tests/support/aws.py) serves DynamoDB requests one at a time, as the real
service serialises writes to one item. That lock covers a single request only:
an adapter that read the item, checked it in Python and then wrote it still let
several threads through in 25 of 40 races, so the test repeats the race
``ROUNDS`` times to catch such an adapter.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

import pytest

from signoff.errors import AlreadyResolved

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.pending_records import PendingItem
    from tests.contract.conftest import Records, Store

CLICKS = 20
ROUNDS = 5


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads far more often than usual, so the clicks really interleave."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)


def race(
    store: Store, records: Records, pending_id: str, now: float
) -> tuple[list[PendingItem], list[Any]]:
    """Resolve ``pending_id`` from ``CLICKS`` threads at once: (winners, refusals)."""
    start = threading.Barrier(CLICKS)
    won: list[PendingItem] = []
    refused: list[AlreadyResolved] = []
    failed: list[BaseException] = []

    def click(number: int) -> None:
        status = "approved" if number % 2 else "denied"
        start.wait()
        try:
            won.append(
                records.resolve(
                    store,
                    pending_id,
                    status=status,
                    actor=f"user-{number}",
                    channel="slack",
                    now=now,
                )
            )
        except AlreadyResolved as late:
            refused.append(late)
        except BaseException as other:  # surfaced by the caller, not swallowed
            failed.append(other)

    threads = [threading.Thread(target=click, args=(number,)) for number in range(CLICKS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    return won, refused


@pytest.mark.usefixtures("busy_switching")
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_exactly_one_of_twenty_simultaneous_resolutions_wins(
    store: Store, records: Records, t0: float, round_: int
) -> None:
    records.pause(store, records.pending("p1"))

    won, refused = race(store, records, "p1", t0 + 1)

    assert len(won) == 1
    assert len(refused) == CLICKS - 1
    winner = won[0]
    assert winner.resolved_by is not None
    # approve and deny were mixed: the stored status is the winner's own choice
    assert winner.status == ("approved" if int(winner.resolved_by.split("-")[1]) % 2 else "denied")
    assert {(late.current.status, late.current.resolved_by) for late in refused} == {
        (winner.status, winner.resolved_by)
    }
    assert store.pending.get("p1") == winner
    # the decision and its audit entry are one write: the winner's entry, and no other
    entries = store.audit.for_subject("s1")
    assert [(e.decision, e.actor, e.pending_id) for e in entries] == [
        (winner.status, winner.resolved_by, "p1")
    ]
