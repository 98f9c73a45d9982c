"""One cap on running turns (``signoff.durable.slots``), through ``Turns``' entry points.

A turn runs only while it holds a run slot. When every slot is taken past the
bounded wait, nothing is dropped: a message is committed and yields (``running``),
a decision stands and its resume is deferred, a continuation gives the session
back due; a continuation or the sweeper runs each once a slot is free.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from signoff.agents import load_agent
from signoff.durable.decide import Approve
from signoff.durable.results import TurnResult
from signoff.durable.slots import DEPLOYMENT, RunCap, RunSlots
from signoff.durable.sweeper import Sweeper
from signoff.messages import ModelResponse, UserMessage
from signoff.models.factory import build_model
from signoff.queue.memory import MemoryQueue
from tests.support.actors import person
from tests.support.durable import StaticAgents, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store

if TYPE_CHECKING:
    from signoff.clock import ManualClock
    from signoff.durable.turns import Turns
    from signoff.messages import ModelRequest

AGENTS = Path(__file__).resolve().parents[3] / "agents"
REFUND = "order A-1001 arrived broken, can you refund it?"
WHERE = "where is order A-1001?"
LEASE = 900.0


class Counted:
    """The sample agent's scripted model, counting its calls."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.calls = 0

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        response: ModelResponse = self.model(request)
        return response


def customer_service() -> tuple[StaticAgents, Counted]:
    agent = load_agent(AGENTS / "customer-service")
    model = Counted(build_model(agent.config.model, agent.directory))
    return StaticAgents({agent.name: (agent, model)}), model


def capped(
    store: Any, clock: ManualClock, agents: StaticAgents, cap: RunCap, queue: MemoryQueue
) -> Turns:
    # the manual clock moves while a turn waits, as time would
    slots = RunSlots(store.slots, cap, clock=clock, sleep=clock.advance)
    return turns_over(store, queue, agents, clock, run_slots=slots, lease_ttl=LEASE)


def occupy(
    store: Any, clock: ManualClock, scope: str = DEPLOYMENT, size: int = 1
) -> list[tuple[str, str]]:
    """Take every slot of ``scope`` as other turns would; (slot, holder) of each."""
    now = clock.now().timestamp()
    taken = []
    for n in range(size):
        slot = store.slots.take(scope, size, holder=f"other-{n}", until=now + LEASE, now=now)
        assert slot is not None
        taken.append((slot, f"other-{n}"))
    return taken


def free(store: Any, taken: list[tuple[str, str]], scope: str = DEPLOYMENT) -> None:
    """The other turns end."""
    for slot, holder in taken:
        store.slots.give_back(scope, slot, holder=holder)


def test_a_message_without_a_slot_is_kept_and_runs_when_one_is_free(
    store: Any, clock: ManualClock
) -> None:
    agents, model = customer_service()
    queue = MemoryQueue()
    turns = capped(store, clock, agents, RunCap(runs=1, wait=2.0), queue)
    others = occupy(store, clock)
    start = clock.monotonic()

    deferred = turns.send("customer-service", WHERE, tenant="default", environment="production")

    # it waited its bounded time, then yielded without calling the model
    assert deferred.status == "running" and model.calls == 0
    assert clock.monotonic() - start == pytest.approx(2.0, abs=0.01)
    session = store.sessions.load(deferred.session_id)
    assert session.status == "running" and session.lease_owner is None
    logged = [m for chunk in store.sessions.read_log(deferred.session_id) for m in chunk.messages]
    assert logged == [UserMessage(content=WHERE)]
    # still full: a continuation gives the session back due, and runs nothing
    again = turns.proceed(deferred.session_id)
    assert isinstance(again, TurnResult) and again.status == "running" and model.calls == 0

    free(store, others)
    done = turns.proceed(deferred.session_id)

    assert isinstance(done, TurnResult) and done.status == "finished"
    assert done.text == "Order A-1001 is delivered with PostNL."
    assert store.slots.held(DEPLOYMENT, 1, now=clock.now().timestamp()) == 0


def test_a_decision_stands_when_its_resume_finds_no_slot_and_a_continuation_resumes_it(
    store: Any, clock: ManualClock
) -> None:
    agents, _ = customer_service()
    queue = MemoryQueue()
    turns = capped(store, clock, agents, RunCap(runs=1, wait=1.0), queue)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.status == "paused" and paused.pending is not None
    others = occupy(store, clock)
    scheduled: list[str] = []

    decided = turns.decide(
        paused.pending.id, Approve(), person("alice", "api"), schedule=scheduled.append
    )

    assert decided.result is not None and decided.result.status == "running"
    assert decided.item.status == "approved" and scheduled == [paused.session_id]
    session = store.sessions.load(paused.session_id)
    # due at once: the continuation claims it, the sweeper finds it stalled
    assert session.status == "running"
    assert session.lease_until is not None and session.lease_until <= clock.now().timestamp()
    assert not store.pending.get(paused.pending.id).resumed

    free(store, others)
    done = turns.proceed(paused.session_id)

    assert isinstance(done, TurnResult) and done.status == "finished"
    assert done.text == "Refunded 42.0 USD for order A-1001 to the original payment method."
    assert store.pending.get(paused.pending.id).resumed


def test_the_sweeper_runs_a_deferred_turn_once_a_slot_is_free(
    store: Any, clock: ManualClock
) -> None:
    agents, _ = customer_service()
    queue = MemoryQueue()
    turns = capped(store, clock, agents, RunCap(runs=2, wait=0.5), queue)
    others = occupy(store, clock, size=2)
    deferred = turns.send("customer-service", WHERE, tenant="default", environment="production")
    assert deferred.status == "running"
    sweeper = Sweeper(
        turns=turns,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=queue,
        clock=clock,
    )
    clock.advance(61)

    assert sweeper.sweep().redriven == [deferred.session_id]  # still full: given back due
    assert store.sessions.load(deferred.session_id).status == "running"
    free(store, others)
    clock.advance(61)
    sweeper.sweep()

    session = store.sessions.load(deferred.session_id)
    assert session.status == "done" and session.text == "Order A-1001 is delivered with PostNL."


def test_a_slot_freed_during_the_wait_is_taken(store: Any, clock: ManualClock) -> None:
    agents, _ = customer_service()
    ((slot, holder),) = occupy(store, clock)
    waited: list[float] = []

    def sleep(seconds: float) -> None:
        waited.append(seconds)
        clock.advance(seconds)
        if len(waited) == 3:  # the other turn ends
            store.slots.give_back(DEPLOYMENT, slot, holder=holder)

    slots = RunSlots(store.slots, RunCap(runs=1, wait=10.0), clock=clock, sleep=sleep)
    turns = turns_over(store, MemoryQueue(), agents, clock, run_slots=slots, lease_ttl=LEASE)

    done = turns.send("customer-service", WHERE, tenant="default", environment="production")

    assert done.status == "finished" and len(waited) == 3
    assert store.slots.held(DEPLOYMENT, 1, now=clock.now().timestamp()) == 0


def test_the_wait_keeps_half_the_invocation_s_time_for_the_turn(
    store: Any, clock: ManualClock
) -> None:
    agents, _ = customer_service()
    turns = capped(store, clock, agents, RunCap(runs=1, wait=60.0), MemoryQueue())
    occupy(store, clock)
    start = clock.monotonic()

    result = turns.send(
        "customer-service",
        WHERE,
        tenant="default",
        environment="production",
        deadline=start + 8.0,
    )

    assert result.status == "running"
    assert clock.monotonic() - start == pytest.approx(4.0, abs=0.01)


def test_a_crashed_holder_s_slot_is_free_once_its_lease_ran_out(
    store: Any, clock: ManualClock
) -> None:
    agents, _ = customer_service()
    turns = capped(store, clock, agents, RunCap(runs=1, wait=0.0), MemoryQueue())
    occupy(store, clock)  # its process died: nobody gives it back
    blocked = turns.send("customer-service", WHERE, tenant="default", environment="production")
    assert blocked.status == "running"

    clock.advance(LEASE)
    done = turns.proceed(blocked.session_id)

    assert isinstance(done, TurnResult) and done.status == "finished"


def test_the_per_tenant_cap_holds_one_tenant_back_and_not_another(
    store: Any, clock: ManualClock
) -> None:
    agents, _ = customer_service()
    turns = capped(store, clock, agents, RunCap(runs=4, per_tenant=1, wait=0.0), MemoryQueue())
    occupy(store, clock, scope="tenant#acme")

    acme = turns.send("customer-service", WHERE, tenant="acme", environment="production")
    globex = turns.send("customer-service", WHERE, tenant="globex", environment="production")

    assert acme.status == "running" and globex.status == "finished"
    now = clock.now().timestamp()
    # the deployment's slot acme's turn took was given back with its tenant's refused
    assert store.slots.held(DEPLOYMENT, 4, now=now) == 0
    assert store.slots.held("tenant#globex", 1, now=now) == 0


def test_without_a_cap_no_slot_is_written(store: Any, clock: ManualClock) -> None:
    agents, _ = customer_service()
    turns = turns_over(store, MemoryQueue(), agents, clock)

    done = turns.send("customer-service", WHERE, tenant="default", environment="production")

    assert done.status == "finished"
    written = [item for page in store.table.scan() for item in page]
    assert written and not [item for item in written if item["pk"].startswith("RUN#")]
