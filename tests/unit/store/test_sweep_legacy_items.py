"""The sweep over a table the previous release wrote: the same work before and after migration.

``tests/fixtures/store_v1_items.json`` is what commit 85040ab's store held at its
``clock`` (``make_store_v1_items.py``). Given those items in a store at that
time, a sweep's ``legacy`` task moves them to this release's keys and its other
tasks then find them: the overdue items expire and their turns resume, the
stalled turn is re-driven and the live one left alone, the unsent rows are
enqueued again and the due retry is made. A table migrated first
(``signoff migrate``'s ``Migrator``) gets exactly the same sweep, with nothing left
to rewrite.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from signoff.agents import load_agent
from signoff.clock import ManualClock
from signoff.durable.sweeper import Sweeper, SweepReport
from signoff.models.factory import build_model
from signoff.queue.memory import MemoryQueue
from signoff.store.memory import MemoryStore
from signoff.store.migrate import LEGACY_PARTITIONS, migrator_for
from signoff.tools import ToolContext, tool
from tests.support.agents import answer, calls, make_agent, playing
from tests.support.durable import StaticAgents, turns_over

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "store_v1_items.json").read_text())
LEGACY_KEYS = ("gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "gsi3pk", "gsi3sk")


def agents() -> StaticAgents:
    """The fixture's agents: the sample customer-service one, and the payer whose
    process died in its tool (its re-drive reports the call interrupted)."""
    shop = load_agent(ROOT / "agents" / "customer-service")

    @tool
    def charge(amount: int, ctx: ToolContext) -> str:
        """Charges a card."""
        return "charged"

    payer = make_agent(charge, name="payer")
    return StaticAgents(
        {
            shop.name: (shop, build_model(shop.config.model, shop.directory)),
            "payer": (payer, playing(calls(("charge", {"amount": 5})), answer("paid"))),
        }
    )


def previous_release() -> tuple[MemoryStore, ManualClock]:
    clock = ManualClock(datetime.fromtimestamp(FIXTURE["clock"], UTC))
    store = MemoryStore(clock=clock)
    for item in FIXTURE["items"]:
        store.table.put(item)
    return store, clock


def sweep(store: MemoryStore, clock: ManualClock) -> SweepReport:
    queue = MemoryQueue()
    turns = turns_over(store, queue, agents(), clock, owner="sweeper")
    sweeper = Sweeper(
        turns=turns,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=queue,
        clock=clock,
        grace=60,
        shards=store.shards.sweep,
        migrator=migrator_for(store),
    )
    return sweeper.sweep()


def raw(store: MemoryStore) -> list[dict[str, Any]]:
    return [item for page in store.table.scan() for item in page]


def pending_of(session_id: str) -> str:
    (found,) = [
        json.loads(item["body"])["id"]
        for item in FIXTURE["items"]
        if item.get("kind") == "pending" and json.loads(item["body"])["session_id"] == session_id
    ]
    return str(found)


def legacy_items() -> list[dict[str, Any]]:
    return [item for item in FIXTURE["items"] if any(k in item for k in LEGACY_KEYS)]


@pytest.fixture(scope="module")
def unmigrated() -> SweepReport:
    store, clock = previous_release()
    report = sweep(store, clock)
    assert [item for item in raw(store) if any(k in item for k in LEGACY_KEYS)] == []
    return report


def test_the_legacy_task_rewrites_every_item_the_previous_release_indexed(
    unmigrated: SweepReport,
) -> None:
    assert sorted(unmigrated.rewritten) == sorted(
        f"{item['pk']}/{item['sk']}" for item in legacy_items()
    )


def test_the_sweep_does_what_was_due_when_the_previous_release_stopped(
    unmigrated: SweepReport,
) -> None:
    overdue = sorted(pending_of(s) for s in ("s-overdue-approval", "s-overdue-question"))
    assert sorted(unmigrated.expired) == overdue
    assert sorted(unmigrated.resumed) == overdue
    # the lease that ran out an hour ago, not the one still live
    assert unmigrated.redriven == ["s-stalled"]
    # the slow retry due at t0 + 22 h; the overdue webhook's is due after the clock
    assert unmigrated.retried == [f"{pending_of('s-waiting-approval')}/slack"]
    unsent = {
        item["pk"].removeprefix("P#") for item in legacy_items() if item.get("gsi2pk") == "UNSENT"
    }
    assert set(unmigrated.requeued) == unsent
    assert (unmigrated.reminded, unmigrated.escalated) == ([], [])


def test_a_migrated_table_gets_the_same_sweep(unmigrated: SweepReport) -> None:
    store, clock = previous_release()
    migrator = migrator_for(store)
    for index, partition in LEGACY_PARTITIONS:
        for page in migrator.pages(index, partition):
            for item in page:
                assert migrator.rewrite(item)

    migrated = sweep(store, clock)

    assert migrated.rewritten == []
    assert migrated == replace(unmigrated, rewritten=[])
