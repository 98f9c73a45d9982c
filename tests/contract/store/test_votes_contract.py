"""Votes on an item that needs several approvals, against every store adapter.

Each vote is one conditional write with its audit entry (``PendingDecisions.vote``);
``signoff.durable.votes.cast`` is the decision path's loop over it. Twenty
people voting at once (the 20-click race of test_resolve_race.py, here with
votes) leave every vote counted once and exactly one of them resolving the item.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

import pytest

from signoff.durable.votes import cast
from signoff.errors import AlreadyResolved, AlreadyVoted, Expired
from signoff.gate.policy import ApprovalPolicy
from signoff.ids import new_id
from signoff.store.pending_records import PendingItem, Vote
from signoff.store.records import AuditEntry

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Literal

    from tests.contract.conftest import Records, Store

VOTERS = 20
ROUNDS = 3
RETENTION = 3600.0


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads far more often than usual, so the votes really interleave."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)


def _item(records: Records, approvals: int = 2, deny_quorum: int = 1) -> PendingItem:
    policy = ApprovalPolicy(approvals=approvals, deny_quorum=deny_quorum, rule="big-refunds")
    return records.pending("p1", policy=policy)


def _vote(
    person: str, at: float, decision: Literal["approve", "deny"] = "approve", channel: str = "slack"
) -> Vote:
    return Vote(person=person, actor=f"U-{person}", channel=channel, at=at, decision=decision)


def _entry(at: float, decision: str) -> AuditEntry:
    return AuditEntry(
        id=new_id(), subject="s1", at=at, kind="vote", decision=decision, actor="x", pending_id="p1"
    )


def test_a_vote_is_stored_with_its_entry_and_counted(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, _item(records))
    first = _vote("alice", t0 + 1)

    written = store.pending.vote(_item(records), first, audit=_entry(t0 + 1, "approve"))

    assert written is not None
    assert written.status == "pending"
    assert written.votes == [first]
    assert written.vote_count == 1
    assert store.pending.get("p1") == written
    assert [e.kind for e in store.audit.for_subject("s1")] == ["vote"]


def test_a_vote_written_on_stale_votes_is_refused_and_writes_nothing(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, _item(records, approvals=3))
    before = _item(records, approvals=3)
    store.pending.vote(before, _vote("alice", t0 + 1), audit=_entry(t0 + 1, "approve"))

    # bob read the item before alice's vote: his write sees a count it did not read
    stale = store.pending.vote(before, _vote("bob", t0 + 2), audit=_entry(t0 + 2, "approve"))

    assert stale is None
    current = store.pending.get("p1")
    assert current is not None
    assert [v.person for v in current.votes] == ["alice"]
    assert len(store.audit.for_subject("s1")) == 1


def test_the_same_person_counts_once(store: Store, records: Records, t0: float) -> None:
    records.pause(store, _item(records))
    after = cast(store.pending, _item(records), _vote("alice", t0 + 1), retention=RETENTION)

    with pytest.raises(AlreadyVoted) as again:
        # the same person through another channel
        cast(store.pending, after, _vote("alice", t0 + 2, channel="email"), retention=RETENTION)

    assert again.value.person == "alice"
    current = store.pending.get("p1")
    assert current is not None
    assert current.status == "pending"
    assert [v.person for v in current.votes] == ["alice"]


def test_the_vote_reaching_the_quorum_resolves_with_one_entry_naming_every_voter(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, _item(records))
    first = cast(store.pending, _item(records), _vote("alice", t0 + 1), retention=RETENTION)

    bob = _vote("bob", t0 + 2, channel="email")
    resolved = cast(store.pending, first, bob, retention=RETENTION)

    assert resolved.status == "approved"
    assert resolved.resolved_by == "U-bob"
    assert resolved.resolved_via == "email"
    assert resolved.retain_until == t0 + 2 + RETENTION
    assert store.pending.due(t0 + 10**9) == []  # left the sweeper's index
    entries = store.audit.for_subject("s1")
    assert [(e.kind, e.decision) for e in entries] == [("vote", "approve"), ("human", "approved")]
    assert "alice (approve, slack)" in entries[1].reason
    assert "bob (approve, email)" in entries[1].reason


def test_a_vote_on_a_resolved_or_expired_item_is_refused(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, _item(records))
    records.resolve(store, "p1", status="denied", actor="carol", channel="slack", now=t0 + 1)
    with pytest.raises(AlreadyResolved):
        cast(store.pending, _item(records), _vote("alice", t0 + 2), retention=RETENTION)

    records.pause(store, _item(records).model_copy(update={"id": "p2", "session_id": "s2"}))
    late = _item(records).expires_at + 1
    with pytest.raises(Expired):
        cast(
            store.pending,
            _item(records).model_copy(update={"id": "p2", "session_id": "s2"}),
            _vote("alice", late),
            retention=RETENTION,
        )


def test_the_first_deny_decides_unless_a_deny_quorum_is_set(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, _item(records))
    denied = cast(store.pending, _item(records), _vote("bob", t0 + 1, "deny"), retention=RETENTION)
    assert denied.status == "denied"

    quorum = _item(records, deny_quorum=2).model_copy(update={"id": "p2", "session_id": "s2"})
    records.pause(store, quorum)
    one = cast(store.pending, quorum, _vote("bob", t0 + 1, "deny"), retention=RETENTION)
    assert one.status == "pending"
    two = cast(store.pending, one, _vote("carol", t0 + 2, "deny"), retention=RETENTION)
    assert two.status == "denied"


@pytest.mark.usefixtures("busy_switching")
@pytest.mark.parametrize("round_", range(ROUNDS))
@pytest.mark.parametrize("approvals", [2, 7])
def test_twenty_simultaneous_voters_reach_the_quorum_exactly_once(
    store: Store, records: Records, t0: float, round_: int, approvals: int
) -> None:
    item = _item(records, approvals=approvals)
    records.pause(store, item)
    start = threading.Barrier(VOTERS)
    outcomes: list[PendingItem] = []
    late: list[AlreadyResolved] = []
    failed: list[BaseException] = []

    def vote(number: int) -> None:
        start.wait()
        try:
            outcomes.append(
                cast(store.pending, item, _vote(f"person-{number}", t0 + 1), retention=RETENTION)
            )
        except AlreadyResolved as refused:
            late.append(refused)
        except BaseException as other:  # surfaced below, not swallowed
            failed.append(other)

    threads = [threading.Thread(target=vote, args=(number,)) for number in range(VOTERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failed == []
    resolving = [outcome for outcome in outcomes if outcome.status == "approved"]
    assert len(resolving) == 1  # exactly one vote reached the quorum
    assert len(outcomes) == approvals  # the votes before it, and it
    assert len(late) == VOTERS - approvals
    final = store.pending.get("p1")
    assert final == resolving[0]
    assert len({v.person for v in final.votes}) == approvals == len(final.votes)
    entries = store.audit.for_subject("s1")
    assert sorted(e.kind for e in entries) == ["human"] + ["vote"] * (approvals - 1)
