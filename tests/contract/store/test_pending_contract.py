"""Contract of the PendingItems port: one resolution wins, expiry, retention, the sweeper's view."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest

from signoff.errors import AlreadyResolved, Expired, NotFound, StoreUnavailable, UsageError
from signoff.store import base
from signoff.store.keys import shard_of
from signoff.store.pending_records import Ruling
from tests.support.ports import mismatches

if TYPE_CHECKING:
    from signoff.clock import ManualClock
    from tests.contract.conftest import Records, Store

ONE_MB = 1024 * 1024


def test_get_returns_the_committed_item_or_none(store: Store, records: Records) -> None:
    pending = records.pending("p1")
    records.pause(store, pending)

    assert store.pending.get("p1") == pending
    assert store.pending.get("p2") is None


def test_the_first_resolution_wins_and_a_later_one_sees_the_winner(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"))

    won = records.resolve(
        store, "p1", status="approved", actor="alice", channel="slack", now=t0 + 5
    )
    with pytest.raises(AlreadyResolved) as late:
        records.resolve(store, "p1", status="denied", actor="bob", channel="email", now=t0 + 6)

    assert (won.status, won.resolved_by, won.resolved_via, won.resolved_at) == (
        "approved",
        "alice",
        "slack",
        t0 + 5,
    )
    assert (late.value.current.status, late.value.current.resolved_by) == ("approved", "alice")
    assert store.pending.get("p1") == won


def test_an_answer_and_a_note_are_kept_with_the_rest_of_the_item(
    store: Store, records: Records, t0: float
) -> None:
    question = records.pending(
        "q1", kind="question", tool=None, args=None, question="Which colour?", options=["b", "r"]
    )
    records.pause(store, question)

    answered = records.resolve(
        store,
        "q1",
        status="answered",
        actor="carol",
        channel="web",
        now=t0 + 1,
        answer="b",
        note="ok",
    )

    expected = question.model_copy(
        update={
            "status": "answered",
            "resolved_by": "carol",
            "resolved_via": "web",
            "resolved_at": t0 + 1,
            "answer": "b",
            "note": "ok",
        }
    )
    assert answered == expected
    assert store.pending.get("q1") == expected


def test_an_answer_too_large_to_store_is_refused_and_changes_nothing(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("q1", kind="question", question="Why?"))

    with pytest.raises(UsageError):
        records.resolve(
            store,
            "q1",
            status="answered",
            actor="carol",
            channel="web",
            now=t0,
            answer="x" * 40_000,
        )

    stored = store.pending.get("q1")
    assert stored is not None and (stored.status, stored.answer) == ("pending", None)
    answered = records.resolve(
        store, "q1", status="answered", actor="carol", channel="web", now=t0, answer="y" * 30_000
    )
    assert answered.answer == "y" * 30_000


def test_a_late_resolution_is_expired_before_any_sweep(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1", expires_at=t0 + 60))

    with pytest.raises(Expired) as expired:
        records.resolve(store, "p1", status="approved", actor="alice", channel="slack", now=t0 + 60)

    # the person is told the item's real status: its time ran out, swept or not
    assert (expired.value.current.id, expired.value.current.status) == ("p1", "expired")
    stored = store.pending.get("p1")
    assert stored is not None and stored.status == "pending"


def test_the_sweeper_expires_an_item_only_once_it_is_due(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1", expires_at=t0 + 60))

    with pytest.raises(UsageError):
        records.resolve(
            store, "p1", status="expired", actor="sweeper", channel="sweeper", now=t0 + 59
        )
    still = store.pending.get("p1")
    expired = records.resolve(
        store, "p1", status="expired", actor="sweeper", channel="sweeper", now=t0 + 60
    )

    assert still is not None and still.status == "pending"
    assert (expired.status, expired.resolved_by) == ("expired", "sweeper")
    with pytest.raises(Expired) as late:
        records.resolve(store, "p1", status="approved", actor="alice", channel="slack", now=t0 + 61)
    assert late.value.current.status == "expired"


def test_the_sweeper_does_not_expire_a_resolved_item(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1", expires_at=t0 + 60))
    records.resolve(store, "p1", status="denied", actor="alice", channel="slack", now=t0 + 1)

    with pytest.raises(AlreadyResolved) as resolved:
        records.resolve(
            store, "p1", status="expired", actor="sweeper", channel="sweeper", now=t0 + 99
        )

    assert (resolved.value.current.status, resolved.value.current.resolved_by) == (
        "denied",
        "alice",
    )


def test_resolving_an_unknown_item_is_not_found(store: Store, records: Records, t0: float) -> None:
    with pytest.raises(NotFound) as missing:
        records.resolve(store, "nope", status="approved", actor="alice", channel="slack", now=t0)

    assert (missing.value.kind, missing.value.key) == ("pending item", "nope")


def test_a_resolved_item_is_gone_once_its_retention_passes(
    store: Store, records: Records, t0: float, clock: ManualClock
) -> None:
    records.pause(store, records.pending("p1"))
    records.resolve(
        store,
        "p1",
        status="approved",
        actor="alice",
        channel="slack",
        now=t0,
        retain_until=t0 + 100,
    )

    clock.advance(99)
    kept = store.pending.get("p1")
    clock.advance(1)

    assert kept is not None and kept.retain_until == t0 + 100
    assert store.pending.get("p1") is None
    with pytest.raises(NotFound):
        records.resolve(store, "p1", status="denied", actor="bob", channel="slack", now=t0 + 100)


def test_due_lists_items_past_their_expiry_oldest_first(
    store: Store, records: Records, t0: float
) -> None:
    for pending_id, expires in [("p30", 30), ("p10", 10), ("p20", 20), ("p500", 500)]:
        records.pause(
            store,
            records.pending(pending_id, session_id=f"s-{pending_id}", expires_at=t0 + expires),
        )
    records.resolve(store, "p20", status="approved", actor="alice", channel="slack", now=t0)

    assert [item.id for item in store.pending.due(t0 + 100)] == ["p10", "p30"]
    assert [item.id for item in store.pending.due(t0 + 100, limit=1)] == ["p10"]
    assert [item.id for item in store.pending.due(t0 + 30)] == ["p10", "p30"]
    assert store.pending.due(t0 + 5) == []


def test_mark_resumed_records_the_resume(store: Store, records: Records, t0: float) -> None:
    records.pause(store, records.pending("p1"))
    records.resolve(store, "p1", status="approved", actor="alice", channel="slack", now=t0)

    store.pending.mark_resumed("p1")

    stored = store.pending.get("p1")
    assert stored is not None and (stored.resumed, stored.status) == (True, "approved")
    with pytest.raises(NotFound):
        store.pending.mark_resumed("nope")


def test_an_item_with_1mb_arguments_reads_back_identical_and_resolves(
    store: Store, records: Records, t0: float
) -> None:
    document = "".join(f"{i:08x}" for i in range(ONE_MB // 8))
    pending = records.pending("p1", args={"document": document})
    records.pause(store, pending)

    resolved = records.resolve(
        store, "p1", status="approved", actor="alice", channel="slack", now=t0
    )

    assert store.pending.get("p1") == resolved
    assert resolved.args == {"document": document}
    assert [item.id for item in store.pending.due(t0 + 7200)] == []


# --- the sweeper's reminders ---------------------------------------------------------------


def _due(store: Store, now: float) -> list[str]:
    """Every shard's items due by ``now``, as the sweep's ``due`` tasks read them."""
    return sorted(
        item.id for shard in range(store.shards.sweep) for item in store.pending.due_in(shard, now)
    )


def _same_shard(store: Store, count: int) -> list[str]:
    """``count`` pending ids that land in one sweep shard."""
    ids = (f"p{n}" for n in range(10_000))
    return [i for i in ids if shard_of(i, store.shards.sweep) == 0][:count]


def test_due_in_reads_what_is_due_and_a_resolved_items_unresumed_turn(
    store: Store, records: Records, t0: float
) -> None:
    for pending_id, expires in [("p5", 50), ("p1", 10), ("p4", 40), ("p2", 20), ("p3", 30)]:
        records.pause(
            store,
            records.pending(pending_id, session_id=f"s-{pending_id}", expires_at=t0 + expires),
        )
    records.pause(store, records.pending("due", session_id="s-due", expires_at=t0 + 5))
    records.resolve(store, "p3", status="approved", actor="alice", channel="slack", now=t0)

    # p1 falls due at t0 + 10 exactly; p3 is decided, its turn not yet resumed
    assert _due(store, t0 + 10) == ["due", "p1"]
    assert _due(store, t0 + 59) == ["due", "p1", "p2", "p4", "p5"]
    # the resume's grace after the decision has passed: the sweep resumes its turn
    assert _due(store, t0 + 60) == ["due", "p1", "p2", "p3", "p4", "p5"]
    store.pending.mark_resumed("p3")
    assert "p3" not in _due(store, t0 + 60)


def test_due_in_reads_one_shard_page_by_page_as_it_is_consumed(
    store: Store, records: Records, t0: float
) -> None:
    # more items in one shard than one page holds (the contract store pages by 3)
    ids = _same_shard(store, 5)
    for n, pending_id in enumerate(ids):
        records.pause(store, records.pending(pending_id, session_id=f"s{n}", expires_at=t0 + n))

    due = store.pending.due_in(0, t0 + 10)
    first = next(due)
    records.resolve(store, ids[4], status="denied", actor="bob", channel="slack", now=t0 + 1)

    # the last one sat on the second page: read after its resolution moved its key on
    assert [first.id, *(item.id for item in due)] == ids[:4]
    assert all(
        item.id not in ids
        for s in range(1, store.shards.sweep)
        for item in store.pending.due_in(s, t0 + 10)
    )


def test_a_reminder_moves_the_items_due_time_to_its_next_reminder(
    store: Store, records: Records, t0: float
) -> None:
    item = records.pending("p1", expires_at=t0 + 3600).model_copy(update={"remind_after": 600.0})
    records.pause(store, item)
    assert _due(store, t0 + 599) == []
    assert _due(store, t0 + 600) == ["p1"]

    store.pending.note_reminder("p1", 0, now=t0 + 600)

    assert _due(store, t0 + 1199) == []
    assert _due(store, t0 + 1200) == ["p1"]


def test_note_reminder_counts_each_reminder_once(store: Store, records: Records, t0: float) -> None:
    records.pause(store, records.pending("p1"))

    first = store.pending.note_reminder("p1", 0, now=t0 + 60)
    repeated = store.pending.note_reminder("p1", 0, now=t0 + 61)
    second = store.pending.note_reminder("p1", 1, now=t0 + 120)

    assert first is not None and (first.reminders, first.reminded_at) == (1, t0 + 60)
    assert repeated is None
    assert second is not None and (second.reminders, second.reminded_at) == (2, t0 + 120)
    stored = store.pending.get("p1")
    assert stored is not None and (stored.reminders, stored.reminded_at) == (2, t0 + 120)


def test_note_reminder_refuses_a_resolved_a_due_or_an_unknown_item(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"))
    records.pause(store, records.pending("p2", session_id="s2", expires_at=t0 + 30))
    records.resolve(store, "p1", status="approved", actor="alice", channel="slack", now=t0)

    assert store.pending.note_reminder("p1", 0, now=t0 + 1) is None
    assert store.pending.note_reminder("p2", 0, now=t0 + 30) is None
    assert store.pending.note_reminder("nope", 0, now=t0) is None
    assert store.pending.get("p2").reminders == 0  # type: ignore[union-attr]


def test_two_sweeps_noting_the_same_reminder_at_once_count_it_once(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"))
    start = threading.Barrier(8)
    won: list[object] = []

    def note() -> None:
        start.wait()
        won.append(store.pending.note_reminder("p1", 0, now=t0 + 60))

    threads = [threading.Thread(target=note) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(result is not None for result in won) == 1
    assert store.pending.get("p1").reminders == 1  # type: ignore[union-attr]


# --- a decision and its audit entry are one write (DESIGN.md §5.8) -------------------------


def test_a_winning_resolution_writes_exactly_its_audit_entry(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"))
    entry = records.decision_entry(
        "p1", status="approved", actor="alice", channel="slack", now=t0 + 5, subject="s1"
    )

    ruling = Ruling(status="approved", actor="alice", channel="slack", now=t0 + 5)
    won = store.pending.resolve("p1", ruling, audit=entry)

    assert won.status == "approved"
    assert store.audit.for_subject("s1") == [entry]


@pytest.mark.parametrize("refusal", ["resolved", "late", "unknown", "not-due", "too-large"])
def test_a_refused_resolution_writes_no_audit_entry(
    store: Store, records: Records, t0: float, refusal: str
) -> None:
    records.pause(store, records.pending("p1", expires_at=t0 + 60))
    records.pause(store, records.pending("q1", session_id="s2", kind="question", question="Why?"))
    first = records.resolve(store, "p1", status="denied", actor="bob", channel="api", now=t0)
    before = {subject: store.audit.for_subject(subject) for subject in ("s1", "s2")}
    attempts = {
        "resolved": ("p1", "approved", t0 + 1, {}),
        "late": ("q1", "answered", t0 + 3600, {"answer": "because"}),
        "unknown": ("nope", "approved", t0, {}),
        "not-due": ("q1", "expired", t0 + 5, {}),
        "too-large": ("q1", "answered", t0, {"answer": "x" * 40_000}),
    }
    pending_id, status, now, extra = attempts[refusal]

    with pytest.raises((AlreadyResolved, Expired, NotFound, UsageError)):
        records.resolve(
            store, pending_id, status=status, actor="mallory", channel="slack", now=now, **extra
        )

    assert {subject: store.audit.for_subject(subject) for subject in ("s1", "s2")} == before
    assert store.pending.get("p1") == first
    assert store.pending.get("q1").status == "pending"  # type: ignore[union-attr]


def test_an_audit_entry_that_cannot_be_written_leaves_the_item_pending(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"))
    taken = records.decision_entry(
        "p1", status="approved", actor="alice", channel="slack", now=t0, subject="s1"
    )
    store.audit.record([taken])

    # the same entry again: its write fails, so the decision must not be stored either
    ruling = Ruling(status="approved", actor="alice", channel="slack", now=t0)
    with pytest.raises(StoreUnavailable):
        store.pending.resolve("p1", ruling, audit=taken)

    stored = store.pending.get("p1")
    assert stored is not None and (stored.status, stored.resolved_by) == ("pending", None)
    assert store.audit.for_subject("s1") == [taken]
    won = records.resolve(store, "p1", status="approved", actor="alice", channel="slack", now=t0)
    assert won.status == "approved" and len(store.audit.for_subject("s1")) == 2


def test_an_approval_policy_is_kept_whole_with_the_item(store: Store, records: Records) -> None:
    from signoff.gate.policy import ApprovalPolicy, EscalationStep

    policy = ApprovalPolicy(
        approvals=2,
        approvers=("alice", "finance-leads"),
        deny_quorum=2,
        escalate=(
            EscalationStep(after=1800.5, notify=("slack-leads",)),
            EscalationStep(after=7200, notify=("email-oncall", "lark"), then="approve"),
        ),
        rule="big-refunds",
    )
    pending = records.pending("p1").model_copy(update={"policy": policy})
    records.pause(store, pending)

    stored = store.pending.get("p1")
    assert stored is not None
    assert stored.policy == policy
    assert (stored.votes, stored.escalation_step, stored.escalated_at) == ([], 0, None)


# --- escalation: each step taken once (signoff.durable.escalation) -------------------------


def test_note_escalation_takes_each_step_once(store: Store, records: Records, t0: float) -> None:
    records.pause(store, records.pending("p1"))

    first = store.pending.note_escalation("p1", 0, now=t0 + 60)
    repeated = store.pending.note_escalation("p1", 0, now=t0 + 61)
    second = store.pending.note_escalation("p1", 1, now=t0 + 120)
    skipped = store.pending.note_escalation("p1", 3, now=t0 + 121)

    assert first is not None and (first.escalation_step, first.escalated_at) == (1, t0 + 60)
    assert repeated is None and skipped is None
    assert second is not None and (second.escalation_step, second.escalated_at) == (2, t0 + 120)
    stored = store.pending.get("p1")
    assert stored is not None and (stored.escalation_step, stored.escalated_at) == (2, t0 + 120)


def test_note_escalation_refuses_a_resolved_a_due_or_an_unknown_item(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"))
    records.pause(store, records.pending("p2", session_id="s2", expires_at=t0 + 30))
    records.resolve(store, "p1", status="approved", actor="alice", channel="slack", now=t0)

    assert store.pending.note_escalation("p1", 0, now=t0 + 1) is None
    assert store.pending.note_escalation("p2", 0, now=t0 + 30) is None
    assert store.pending.note_escalation("nope", 0, now=t0) is None
    assert store.pending.get("p2").escalation_step == 0  # type: ignore[union-attr]


def test_two_sweeps_taking_the_same_escalation_step_at_once_take_it_once(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"))
    start = threading.Barrier(8)
    won: list[object] = []

    def note() -> None:
        start.wait()
        won.append(store.pending.note_escalation("p1", 0, now=t0 + 60))

    threads = [threading.Thread(target=note) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(result is not None for result in won) == 1
    assert store.pending.get("p1").escalation_step == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "port",
    [
        "PendingReader",
        "PendingDecisions",
        "ResumedPending",
        "TurnPending",
        "SweptPending",
        "InboxPending",
        "OperatorPending",
    ],
)
def test_the_adapter_is_each_narrow_port(store: Store, port: str) -> None:
    # every caller holds the adapter as its own narrow port: each method, as declared
    assert mismatches(store.pending, getattr(base, port)) == []
