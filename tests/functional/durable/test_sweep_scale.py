"""A sweep reads what is due, not what is open, and handles each due item once.

Given many items falling due in the same minute — some expiring, some owing a
``stuck`` reminder, some an escalation step — when two sweeps' tasks run at once
on worker threads, then after at most two sweeps every item was expired, reminded
or escalated exactly once, none skipped; a stalled turn is re-driven by its own
task whatever is due ahead of it; and a sweep with nothing due reads the same few
pages however many items are open.

The 10,000-item run is on the in-memory table, which applies the very conditions
the DynamoDB adapter renders; on moto the same test runs at a size moto can serve
(its TransactWriteItems deep-copies every table it touches, so each transaction
costs time in proportion to the items stored: see the issue note).
"""

from __future__ import annotations

import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from signoff.clock import ManualClock
from signoff.durable.sweeper import Sweeper, SweepReport
from signoff.durable.turns import Turns
from signoff.engine.state import TurnState
from signoff.gate.policy import EscalationStep, policy_of
from signoff.queue.memory import MemoryQueue
from signoff.store.keys import SWEEP_INDEX
from signoff.store.memory import MemoryStore
from signoff.tools import tool
from tests.support.agents import answer, make_agent, playing
from tests.support.aws import aws as aws
from tests.support.builders import T0, pending_approval
from tests.support.durable import StaticAgents

if TYPE_CHECKING:
    from signoff.durable.sweeper import SweepTask
    from signoff.store.dynamodb import DynamoStore
    from signoff.store.session_records import SessionRecord

    Store = MemoryStore | DynamoStore

MINUTE = 60.0
START = datetime.fromtimestamp(T0, UTC)
LADDER = (EscalationStep(after=1800, notify=("leads",)), EscalationStep(after=7200, then="deny"))


@tool
def refund(order: str) -> str:
    """Refund ``order``."""
    return f"refunded {order}"


def agents() -> StaticAgents:
    agent = make_agent(refund, name="refunds")
    config = agent.config.model_validate(
        {
            **agent.config.model_dump(by_alias=True),
            "notify": {"slack": ["approval", "stuck"], "leads": ["approval"]},
            "remindAfter": "30m",
        }
    )
    agent = type(agent)(**{**agent.__dict__, "config": config})
    return StaticAgents({agent.name: (agent, playing(answer("done")))})


def sweeper(store: Store, clock: ManualClock) -> Sweeper:
    turns = Turns(
        catalog=agents(),
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=MemoryQueue(),
        clock=clock,
        model_for=agents().model_for,
    )
    return Sweeper(
        turns=turns,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=MemoryQueue(),
        clock=clock,
        shards=store.shards.sweep,
    )


def populate(store: Store, count: int) -> dict[str, str]:
    """``count`` items that all fall due between T0 + 30 min and T0 + 31 min: a third
    expire, a third owe their first reminder, a third their first escalation step.
    The item ids, each with what it is due for."""
    due: dict[str, str] = {}
    for n in range(count):
        pending_id = f"p{n:05d}"
        at = T0 + (n % 60)  # requested within one minute
        match n % 3:
            case 0:
                item = pending_approval(
                    pending_id, session_id=f"s{n}", requested_at=at, expires_at=at + 1800
                )
                due[pending_id] = "expired"
            case 1:
                item = pending_approval(
                    pending_id,
                    session_id=f"s{n}",
                    requested_at=at,
                    expires_at=at + 86400,
                    remind_after=1800.0,
                )
                due[pending_id] = "reminded"
            case _:
                item = pending_approval(
                    pending_id,
                    session_id=f"s{n}",
                    requested_at=at,
                    expires_at=at + 86400,
                    policy=policy_of(agent_ladder=LADDER),
                )
                due[pending_id] = "escalated"
        store.table.put(store.codec.encode(item))
    return due


def run_concurrently(sweeps: list[Sweeper], workers: int = 8) -> list[SweepReport]:
    """Every task of each sweep's plan, all at once on ``workers`` threads."""
    tasks: list[tuple[Sweeper, SweepTask]] = [(s, task) for s in sweeps for task in s.plan()]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda pair: pair[0].run(pair[1]), tasks))


def handled(reports: list[SweepReport]) -> Counter[tuple[str, str]]:
    """(item id, what was done) pairs the reports name, counted."""
    done: Counter[tuple[str, str]] = Counter()
    for report in reports:
        done.update((pending_id, "expired") for pending_id in report.expired)
        done.update(
            (subject.split(":")[1], "reminded")
            for subject in report.reminded
            if subject.startswith("stuck:")  # not a stalled run's notice
        )
        done.update((subject.split(":")[1], "escalated") for subject in report.escalated)
    return done


def check_each_once(store: Store, due: dict[str, str], reports: list[SweepReport]) -> None:
    done = handled(reports)
    assert set(done) == {(pending_id, what) for pending_id, what in due.items()}, "none skipped"
    assert set(done.values()) == {1}, "none handled twice"
    for pending_id, what in due.items():
        item = store.pending.get(pending_id)
        assert item is not None
        if what == "expired":
            assert item.status == "expired"
            kinds = [entry.kind for entry in store.audit.for_subject(item.session_id)]
            assert kinds == ["expiry"]
        elif what == "reminded":
            assert (item.status, item.reminders) == ("pending", 1)
            assert len(store.outbox.rows(f"stuck:{pending_id}:1")) == 1
        else:
            assert (item.status, item.escalation_step) == ("pending", 1)
            assert len(store.outbox.rows(f"escalate:{pending_id}:1")) == 1


def sweep_twice_at_once(store: Store, clock: ManualClock, due: dict[str, str]) -> None:
    clock.advance(31 * MINUTE)  # every item fell due in the last minute
    first = run_concurrently([sweeper(store, clock), sweeper(store, clock)])
    clock.advance(MINUTE)
    second = run_concurrently([sweeper(store, clock), sweeper(store, clock)])
    check_each_once(store, due, first + second)


def test_ten_thousand_items_due_in_one_minute_are_each_handled_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR)  # the expired items have no session to resume
    clock = ManualClock(START)
    store = MemoryStore(clock=clock)
    due = populate(store, 10_000)
    sweep_twice_at_once(store, clock, due)


def test_items_due_in_one_minute_are_each_handled_once_on_dynamodb(
    aws: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from signoff.store.dynamodb import DynamoStore

    caplog.set_level(logging.ERROR)
    clock = ManualClock(START)
    store = DynamoStore.from_env(clock=clock)
    due = populate(store, 120)
    sweep_twice_at_once(store, clock, due)


class CountingTable:
    """The store's table, counting the index pages a sweep reads."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self.pages = 0
        self.items = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    def query(self, partition: str, sort: Any = None, **kwargs: Any) -> Any:
        for page in self._table.query(partition, sort, **kwargs):
            self.pages += 1
            self.items += len(page)
            yield page


@pytest.mark.parametrize("open_items", [1_000, 10_000])
def test_a_sweep_with_nothing_due_reads_one_page_per_task_however_many_are_open(
    open_items: int,
) -> None:
    clock = ManualClock(START)
    store = MemoryStore(clock=clock)
    for n in range(open_items):
        item = pending_approval(f"p{n}", session_id=f"s{n}", expires_at=T0 + 86400 + n)
        store.table.put(store.codec.encode(item))
    counting = CountingTable(store.table)
    for port in (store.pending, store.outbox, store.sessions):
        port._items = counting  # type: ignore[assignment]  # the ports' one table

    report = sweeper(store, clock).sweep()

    assert report == SweepReport()
    tasks = len(sweeper(store, clock).plan())
    assert (counting.pages, counting.items) == (tasks, 0)
    assert tasks == 4 * store.shards.sweep  # send, retry, due and stalled, per shard


@pytest.mark.parametrize(("adapter", "due_ahead"), [("memory", 3_000), ("dynamodb", 120)])
def test_a_stalled_turn_is_re_driven_by_its_own_task_behind_many_due_items(
    adapter: str, due_ahead: int, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    clock = ManualClock(START)
    store: Store
    if adapter == "memory":
        store = MemoryStore(clock=clock)
    else:
        from signoff.store.dynamodb import DynamoStore

        request.getfixturevalue("aws")
        store = DynamoStore.from_env(clock=clock)
    due = populate(store, due_ahead)
    turns = sweeper(store, clock).turns
    # a turn whose process died mid-run: running from a checkpoint, its lease run out
    paused = turns.send("refunds", "hello", tenant="acme", environment="production")
    assert paused.status == "finished"
    record = store.sessions.load(paused.session_id)
    assert record is not None
    stalled = _stall(store, record)
    clock.advance(31 * MINUTE)  # every due item fell due, and the lease ran out long ago
    sweep = sweeper(store, clock)
    # the due tasks get no time at all: their deadline has passed
    late = clock.monotonic() - 1
    reports = [
        sweep.run(task, deadline=late if task.job == "due" else None) for task in sweep.plan()
    ]

    assert [r for report in reports for r in report.redriven] == [stalled.session_id]
    assert [r for report in reports for r in report.reminded] == [
        f"stalled:{stalled.session_id}:run-stalled"
    ]
    assert not handled(reports), "the due tasks ran out of time before any item"
    assert len(due) == due_ahead


def _stall(store: Store, record: SessionRecord) -> SessionRecord:
    """The session as a process that died while running it left it."""
    state = record.state
    if state is None:
        state = TurnState.model_validate(
            {
                "run_id": "run-stalled",
                "session_id": record.session_id,
                "agent": record.agent,
                "tenant": record.tenant,
                "environment": record.environment,
            }
        )
    stalled = record.model_copy(
        update={
            "status": "running",
            "state": state,
            "lease_owner": "dead-process",
            "lease_until": T0 + 60,
            "lease_key_at": T0 + 60,
        }
    )
    item = store.codec.encode(stalled)
    assert item[SWEEP_INDEX.pk].startswith("LEASE")
    store.table.put(item)
    return stalled
