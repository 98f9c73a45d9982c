"""Contract of the approvals inbox's reads: one tenant's pending items and audit entries.

``InboxPending.of_tenant`` and ``Audit.of_tenant`` read the tenant's own partition of
the ``by-tenant`` index, on memory and on DynamoDB (moto, the template's table) alike,
paging through the store's small page size and resuming after a cursor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.store.pending_records import Ruling

if TYPE_CHECKING:
    from tests.contract.conftest import Records, Store


def test_a_tenants_pending_items_come_oldest_first_without_other_tenants_or_resolved_ones(
    store: Store, records: Records, t0: float
) -> None:
    for number, (tenant, offset) in enumerate(
        [("acme", 30), ("acme", 10), ("globex", 5), ("acme", 20), ("acme", 40), ("acme", 50)]
    ):
        item = records.pending(
            f"p{number}", session_id=f"s{number}", tenant=tenant, requested_at=t0 + offset
        )
        records.pause(store, item)
    records.resolve(
        store, "p4", status="approved", actor="alice", channel="inbox", now=t0 + 60, session_id="s4"
    )

    listed = [item.id for item in store.pending.of_tenant("acme", t0 + 60)]
    after_second = [
        item.id for item in store.pending.of_tenant("acme", t0 + 60, after=(t0 + 20, "p3"))
    ]

    assert listed == ["p1", "p3", "p0", "p5"]
    assert after_second == ["p0", "p5"]
    assert [item.id for item in store.pending.of_tenant("globex", t0 + 60)] == ["p2"]
    # an item past its expiry waits for nobody, swept or not
    assert list(store.pending.of_tenant("acme", t0 + 3600)) == []


def test_a_tenants_audit_entries_come_newest_first_within_the_range_and_no_rule_entries(
    store: Store, records: Records, t0: float
) -> None:
    entries = [
        records.audit("a1", at=t0 + 10, kind="human", decision="approved", tenant="acme"),
        records.audit("a2", at=t0 + 20, kind="refusal", decision="refused", tenant="acme"),
        records.audit("a3", at=t0 + 30, kind="rule", decision="ask", tenant="acme"),
        records.audit("a4", at=t0 + 40, kind="expiry", decision="expired", tenant="acme"),
        records.audit("a5", at=t0 + 50, kind="human", decision="denied", tenant="acme"),
        records.audit("a6", at=t0 + 60, kind="human", decision="denied", tenant="acme"),
        records.audit("b1", at=t0 + 25, kind="human", decision="approved", tenant="globex"),
        # written before entries named their tenant: in no tenant's list
        records.audit("c1", at=t0 + 35, kind="human", decision="approved"),
    ]
    store.audit.record(entries)

    def ids(**range_: float | tuple[float, str]) -> list[str]:
        return [entry.id for entry in store.audit.of_tenant("acme", **range_)]  # type: ignore[arg-type]

    assert ids(since=t0, until=t0 + 100) == ["a6", "a5", "a4", "a2", "a1"]
    # since inclusive, until exclusive
    assert ids(since=t0 + 20, until=t0 + 60) == ["a5", "a4", "a2"]
    assert ids(since=t0, until=t0 + 100, before=(t0 + 50, "a5")) == ["a4", "a2", "a1"]
    assert [e.id for e in store.audit.of_tenant("globex", since=t0, until=t0 + 100)] == ["b1"]


def test_a_decision_written_through_the_port_joins_its_tenants_history(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"))
    entry = records.decision_entry(
        "p1", status="approved", actor="alice", channel="inbox", now=t0 + 5, subject="s1"
    ).model_copy(update={"tenant": "acme", "agent": "refunds"})

    ruling = Ruling(status="approved", actor="alice", channel="inbox", now=t0 + 5)
    store.pending.resolve("p1", ruling, audit=entry)

    assert list(store.audit.of_tenant("acme", since=t0, until=t0 + 10)) == [entry]
    assert list(store.pending.of_tenant("acme", t0 + 5)) == []
