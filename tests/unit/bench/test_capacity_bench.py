"""bench/capacity.py's meter (DynamoDB's on-demand rules per partition and index) and its report."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bench import capacity
from bench.capacity_families import kind_of, shapes, tenant_of
from bench.capacity_wiring import deployment_variables, metered_store
from bench.capacity_workload import RATE, ROOT
from bench.metering import TABLE, GlobalIndex, MeteringTable, Usage, global_indexes
from signoff.store.memory import MemoryTable
from signoff.store.table import Attr, ConditionFailed, Index, Put, Update

KEYS_ONLY = GlobalIndex("sweep", "gpk", "gsk", "KEYS_ONLY")
EVERYTHING = GlobalIndex("listing", "lpk", "lsk", "ALL")
SOME = GlobalIndex("some", "spk", "ssk", "INCLUDE", frozenset({"status"}))


def table(*indexes: GlobalIndex) -> MeteringTable:
    return MeteringTable(MemoryTable(), indexes or (KEYS_ONLY, EVERYTHING, SOME))


def wru(meter: MeteringTable, index: str, partition: str) -> float:
    return meter.meter.by_partition().get((index, partition), Usage()).wru


def test_the_indexes_and_their_projections_come_from_the_template() -> None:
    template = {
        "Resources": {
            "SignoffTable": {
                "Properties": {
                    "GlobalSecondaryIndexes": [
                        {
                            "IndexName": "a",
                            "KeySchema": [
                                {"AttributeName": "apk", "KeyType": "HASH"},
                                {"AttributeName": "ask", "KeyType": "RANGE"},
                            ],
                            "Projection": {"ProjectionType": "KEYS_ONLY"},
                        },
                        {
                            "IndexName": "b",
                            "KeySchema": [
                                {"AttributeName": "bsk", "KeyType": "RANGE"},
                                {"AttributeName": "bpk", "KeyType": "HASH"},
                            ],
                            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]},
                        },
                    ]
                }
            }
        }
    }
    assert global_indexes(template) == (
        GlobalIndex("a", "apk", "ask", "KEYS_ONLY"),
        GlobalIndex("b", "bpk", "bsk", "INCLUDE", frozenset({"x"})),
    )
    # the real template: every index the store queries is there
    from signoff_dev.local.template import load_template

    names = {index.name for index in global_indexes(load_template(ROOT / "template.yaml"))}
    assert {"pending-by-expiry", "by-tenant"} <= names


def test_a_keys_only_index_is_not_written_when_only_a_non_key_attribute_changes() -> None:
    # Given an item in all three indexes, 1.5 KB of it a body no index key holds
    meter = table()
    item = {
        "pk": "P#1",
        "sk": "META",
        "gpk": "DUE",
        "gsk": "0001",
        "lpk": "T#a",
        "lsk": "0001",
        "spk": "S",
        "ssk": "1",
        "status": "pending",
        "body": "x" * 1500,
    }
    meter.put(item)
    assert wru(meter, TABLE, "P#1") == 2  # 2 KB written
    assert wru(meter, "sweep", "DUE") == 1  # the keys alone: under 1 KB
    assert wru(meter, "listing", "T#a") == 2  # everything
    assert wru(meter, "some", "S") == 1
    meter.meter.reset()
    # When only the body changes
    meter.update(Update(("P#1", "META"), {"body": "y" * 1500}))
    # Then the table and the index projecting everything are written; the others not
    assert wru(meter, TABLE, "P#1") == 2
    assert wru(meter, "listing", "T#a") == 2
    assert ("sweep", "DUE") not in meter.meter.by_partition()
    assert ("some", "S") not in meter.meter.by_partition()
    meter.meter.reset()
    # An included attribute changing writes that index once, in place
    meter.update(Update(("P#1", "META"), {"status": "approved"}))
    assert wru(meter, "some", "S") == 1
    assert ("sweep", "DUE") not in meter.meter.by_partition()


def test_a_packed_body_is_charged_its_raw_bytes() -> None:
    # A Binary attribute (a packed body, ``zbody``) counts its byte length plus its
    # name: 1,016 bytes fit one write unit (its base64 would take two), 1,036 do not
    meter = table()
    meter.put({"pk": "S#1", "sk": "META", "zbody": b"\x00" * 1000})
    assert wru(meter, TABLE, "S#1") == 1
    meter.put({"pk": "S#2", "sk": "META", "zbody": b"\x00" * 1020})
    assert wru(meter, TABLE, "S#2") == 2
    # and a strongly consistent read of it, under 4 KB, one read unit
    assert meter.get(("S#2", "META")) is not None
    assert meter.meter.by_partition()[(TABLE, "S#2")].rru == 1.0


def test_a_store_port_not_over_the_metering_table_stops_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a store whose sessions port is over a table of its own (what it writes
    # would go uncharged: a run metering nothing and passing)
    from signoff.clock import ManualClock
    from signoff.settings import Deployment
    from signoff.store.memory import MemoryStore
    from signoff.store.sessions import TableSessions
    from signoff_dev.local.template import load_template

    def elsewhere(store: MemoryStore) -> TableSessions:
        return TableSessions(MemoryTable(), store.codec, now=store.now)

    monkeypatch.setattr(MemoryStore, "sessions", property(elsewhere))
    template = load_template(ROOT / "template.yaml")
    deployment = Deployment.from_env(deployment_variables(template, RATE, {}))
    # Then the bench refuses to run
    with pytest.raises(SystemExit, match="sessions port"):
        metered_store(deployment, global_indexes(template), ManualClock())
    # and over the store as built, every port is metered
    monkeypatch.undo()
    store, metered = metered_store(deployment, global_indexes(template), ManualClock())
    assert store.sessions._items is metered and store.pending._items is metered


def test_a_moved_key_is_two_writes_one_on_each_partition_and_leaving_is_one() -> None:
    meter = table(KEYS_ONLY)
    meter.put({"pk": "P#1", "sk": "META", "gpk": "DUE#1", "gsk": "0001"})
    meter.meter.reset()
    # When its sort key moves within the partition: delete + put there
    meter.update(Update(("P#1", "META"), {"gsk": "0002"}))
    assert wru(meter, "sweep", "DUE#1") == 2
    meter.meter.reset()
    # When its partition key moves: one write on the old, one on the new
    meter.update(Update(("P#1", "META"), {"gpk": "DUE#2"}))
    assert wru(meter, "sweep", "DUE#1") == 1 and wru(meter, "sweep", "DUE#2") == 1
    meter.meter.reset()
    # When it leaves the index: one write, on the partition it left
    meter.update(Update(("P#1", "META"), remove=("gpk", "gsk")))
    assert meter.meter.by_partition()[("sweep", "DUE#2")].wru == 1
    assert list(meter.query("DUE#2", index=Index("sweep", "gpk", "gsk"))) == [[]]


def test_a_transaction_doubles_the_table_writes_and_a_refused_write_still_pays() -> None:
    meter = table(EVERYTHING)
    big = {"pk": "S#1", "sk": "META", "lpk": "T#a", "lsk": "1", "body": "x" * 1500}
    meter.transact([Put(big), Put({"pk": "S#1", "sk": "L#1"})])
    assert wru(meter, TABLE, "S#1") == 2 * 2 + 2 * 1  # each item's write, twice
    assert wru(meter, "listing", "T#a") == 2  # the index's write is not doubled
    meter.meter.reset()
    with pytest.raises(ConditionFailed):
        meter.put(
            {"pk": "S#1", "sk": "META", "lpk": "T#b", "lsk": "2"}, condition=Attr("x").exists()
        )
    # the refused write pays for the larger image, and no index is written
    assert meter.meter.by_partition() == {(TABLE, "S#1"): Usage(wru=2, writes=1)}
    assert meter.get(("S#1", "META")) == big


def test_reads_are_per_4_kb_and_half_on_an_index_which_returns_what_it_projects() -> None:
    meter = table(KEYS_ONLY, EVERYTHING)
    for n in range(10):
        meter.put(
            {"pk": f"P#{n}", "sk": "META", "gpk": "DUE", "gsk": f"{n:04d}"}
            | {"lpk": "T#a", "lsk": f"{n:04d}", "body": "x" * 1000}
        )
    meter.meter.reset()
    assert meter.get(("P#0", "META")) is not None
    assert meter.get(("P#missing", "META")) is None
    used = meter.meter.by_partition()
    assert used[(TABLE, "P#0")].rru == 1 and used[(TABLE, "P#missing")].rru == 1
    # 10 entries of ~1 KB through the index that projects everything: 3 x 4 KB, halved
    pages = list(meter.query("T#a", index=Index("listing", "lpk", "lsk")))
    assert [len(page) for page in pages] == [10]
    assert meter.meter.by_partition()[("listing", "T#a")].rru == 1.5
    # the keys-only index returns the keys alone, and a page costs at least half a unit
    (page,) = list(meter.query("DUE", Attr("gsk").lt("0002"), index=Index("sweep", "gpk", "gsk")))
    assert page == [
        {"pk": "P#0", "sk": "META", "gpk": "DUE", "gsk": "0000"},
        {"pk": "P#1", "sk": "META", "gpk": "DUE", "gsk": "0001"},
    ]
    assert meter.meter.by_partition()[("sweep", "DUE")].rru == 0.5
    assert meter.meter.by_partition()[("sweep", "DUE")].pages == 1


def test_queries_page_as_the_memory_table_does() -> None:
    # Given the same random items in a MemoryTable and in a MeteringTable over another
    rng = random.Random(7)
    plain, meter = MemoryTable(page_size=3), table(EVERYTHING)
    meter.page_size = 3
    for n in range(60):
        item: dict[str, Any] = {"pk": f"P#{n % 4}", "sk": f"{rng.randrange(100):03d}#{n}"}
        if rng.random() < 0.7:
            item |= {"lpk": f"L#{n % 3}", "lsk": f"{rng.randrange(50):03d}"}
        plain.put(item)
        meter.put(item)
    moved = Update(("P#1", "001#0"), {"lpk": "L#0", "lsk": "010"})
    for target in (plain, meter):
        target.put({"pk": "P#1", "sk": "001#0"})
        target.update(moved)
    conditions = [
        None,
        Attr("lsk").lt("020"),
        Attr("lsk").le("020"),
        Attr("lsk").gt("020"),
        Attr("lsk").between("010", "030"),
        Attr("lsk").begins_with("01"),
        Attr("lsk").eq("010"),
    ]
    index = Index("listing", "lpk", "lsk")
    for partition in ("L#0", "L#1", "L#2", "L#9"):
        for sort in conditions:
            for descending in (False, True):
                for limit in (None, 2, 100):
                    metered = meter.query(
                        partition, sort, index=index, limit=limit, descending=descending
                    )
                    expected = plain.query(
                        partition, sort, index=index, limit=limit, descending=descending
                    )
                    assert list(metered) == list(expected)
    table_key = Index(None, "pk", "sk")
    for sort in (None, Attr("sk").begins_with("05"), Attr("sk").gt("050")):
        assert list(meter.query("P#2", sort, index=table_key, descending=True)) == list(
            plain.query("P#2", sort, index=table_key, descending=True)
        )


def test_a_partition_key_value_is_grouped_by_its_shape() -> None:
    ulid = "01JBCDEFGHJKMNPQRSTVWXYZ01"
    keys = [
        (TABLE, f"S#{ulid}"),
        (TABLE, "RUN#all"),
        (TABLE, "G#customer-service#2026-01-01"),
        ("sweep", "DUE"),
        ("sweep", "DUE#3"),
        ("sweep", "DUE#11"),
        ("by-tenant", "T#tenant-12#PENDING"),
        ("pending-by-expiry", "PENDING"),
    ]
    shaped = shapes(keys)
    assert shaped[(TABLE, f"S#{ulid}")] == "S#<id>"
    assert shaped[("sweep", "DUE")] == "DUE#<n>"  # shard 0 is the base itself
    assert shaped[("pending-by-expiry", "PENDING")] == "PENDING"
    assert tenant_of("T#tenant-12#PENDING#3") == "tenant-12"  # not tenant-1's
    assert [kind_of(shaped[key]) for key in keys] == [
        "per item",
        "constant",
        "constant",
        "sharded",
        "sharded",
        "sharded",
        "per tenant",
        "constant",
    ]


def test_a_small_run_reports_every_family_the_sweep_and_a_verdict() -> None:
    report = capacity.measure(turns=6, sizes=(30, 60))
    assert report.sample.turns == 6
    indexes = {family.index for family in report.families}
    assert TABLE in indexes and "by-tenant" in indexes
    assert {family.kind for family in report.families} <= {
        "per item",
        "per tenant",
        "sharded",
        "constant",
    }
    # the session's own partition takes the turn's writes, from its pause to its end
    session = next(f for f in report.families if f.index == TABLE and f.shape == "S#<id>")
    assert session.kind == "per item" and session.wru_per_turn > 10
    assert [s.open for s in report.sweeps] == [30, 60]
    assert all(s.pages >= 1 for s in report.sweeps)
    found = report.as_json()
    assert set(found) >= {"workload", "families", "sweep", "busiest", "passed", "perTurn"}
    assert found["busiest"]["load"] == max(f.load for f in report.families)
    assert set(found["perTurn"]) == {"pause", "notify", "decide"}
