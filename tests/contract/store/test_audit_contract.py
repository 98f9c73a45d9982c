"""Contract of the Audit port: entries per session, oldest first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.store.pending_records import Ruling

if TYPE_CHECKING:
    from tests.contract.conftest import Records, Store


def test_entries_of_a_session_come_back_oldest_first(
    store: Store, records: Records, t0: float
) -> None:
    late = records.audit("a3", at=t0 + 30, kind="human", decision="approve", actor="alice")
    early = records.audit("a1", at=t0 + 10)
    middle = records.audit("a2", at=t0 + 20, kind="expiry", decision="expired", actor="sweeper")
    latest = records.audit("a4", at=t0 + 40, kind="refusal", decision="deny", actor="actauth")
    elsewhere = records.audit("b1", subject="s2", at=t0)

    store.audit.record([late, early, latest])
    store.audit.record([elsewhere, middle])

    assert store.audit.for_subject("s1") == [early, middle, late, latest]
    assert store.audit.for_subject("s2") == [elsewhere]
    assert store.audit.for_subject("s3") == []


def test_a_sessions_decisions_are_read_without_its_rule_entries(
    store: Store, records: Records, t0: float
) -> None:
    rules = [records.audit(f"r{i:03d}", at=t0 + i) for i in range(1, 40)]
    human = records.audit("h1", at=t0 + 20.5, kind="human", decision="approve", actor="alice")
    expiry = records.audit("x1", at=t0 + 50, kind="expiry", decision="expired", actor="sweeper")
    store.audit.record([*rules, human, expiry])
    queried: list[str] = []
    query = store.table.query

    def counted(partition: str, *args: Any, **kwargs: Any) -> Any:
        for page in query(partition, *args, **kwargs):
            queried.extend(item["sk"] for item in page)
            yield page

    store.table.query = counted  # type: ignore[method-assign]

    assert store.audit.for_subject("s1", rules=False) == [human, expiry]
    # a gate's rule entries, one per tool call, are not read for the decisions
    assert len(queried) == 2
    assert store.audit.for_subject("s1") == [*rules[:20], human, *rules[20:], expiry]


def test_entries_at_the_same_moment_keep_their_id_order(
    store: Store, records: Records, t0: float
) -> None:
    entries = [records.audit(entry_id, at=t0 + 1.5) for entry_id in ("01B", "01C", "01A")]

    store.audit.record(entries)

    assert [entry.id for entry in store.audit.for_subject("s1")] == ["01A", "01B", "01C"]


def test_a_steps_rule_decisions_are_audited_from_its_log(
    store: Store, records: Records, t0: float
) -> None:
    ask = {"type": "actauth:decision", "tool": "refund", "decision": "ask", "reason": "money"}
    allow = {"type": "actauth:decision", "tool": "lookup", "decision": "allow", "reason": ""}
    chunk = records.chunk(3, events=[{"type": "budget:check"}, allow, ask], at=t0 + 3)
    human = records.audit("h1", at=t0 + 9, kind="human", decision="approve", actor="alice")

    records.pause(store, records.pending("p1"), chunk=chunk)
    store.audit.record([human])

    entries = store.audit.for_subject("s1")
    assert [(e.kind, e.tool, e.decision, e.reason, e.actor) for e in entries] == [
        ("rule", "lookup", "allow", "", "rules"),
        ("rule", "refund", "ask", "money", "rules"),
        ("human", None, "approve", "", "alice"),
    ]
    assert [e.at for e in entries[:2]] == [t0 + 3, t0 + 3]
    assert len({e.id for e in entries}) == 3
    # read again, the same entries: their ids name their place in the log
    assert store.audit.for_subject("s1") == entries
    assert store.audit.for_subject("s1", rules=False) == [human]


def test_a_decisions_entry_is_read_back_with_its_actor_and_channel_among_the_others(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"))
    refusal = records.audit(
        "a1", at=t0 + 1, kind="refusal", decision="refused", actor="UA", channel="slack-b"
    )
    store.audit.record([refusal])
    decision = records.decision_entry(
        "p1", status="approved", actor="UB", channel="slack-b", now=t0 + 2, subject="s1"
    )

    ruling = Ruling(status="approved", actor="UB", channel="slack-b", now=t0 + 2)
    store.pending.resolve("p1", ruling, audit=decision)

    assert store.audit.for_subject("s1") == [refusal, decision]
    assert (decision.actor, decision.channel, decision.pending_id) == ("UB", "slack-b", "p1")
