"""Deny with a reason and approve with changes, on the one decision path (``Turns.decide``),
on each store adapter: what the model reads, what the tool runs with, what the audit says."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from signoff.agents import load_agent
from signoff.approver.actors import link_recipient
from signoff.approver.edits import MAX_EDIT_BYTES
from signoff.durable.decide import Approve, Deny
from signoff.errors import Forbidden, InvalidChanges, NotEditable, UsageError
from signoff.messages import ToolResultMessage
from signoff.models.factory import build_model
from signoff.models.scripted import ScriptedModel
from signoff.queue.memory import MemoryQueue
from signoff.store.memory import MemoryStore
from signoff.tools import tool
from tests.functional.durable.test_durable_turns import AGENTS, REFUND, refunds_issued
from tests.support.agents import answer, calls, make_agent, playing
from tests.support.durable import StaticAgents, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store

if TYPE_CHECKING:
    from signoff.clock import ManualClock
    from signoff.durable.results import TurnResult
    from signoff.durable.turns import Turns

ALICE = link_recipient("alice@example.com", "mail")
WHY = "refund only 30, the item was used"


def shop() -> tuple[StaticAgents, ScriptedModel]:
    agent = load_agent(AGENTS / "customer-service")
    model = build_model(agent.config.model, agent.directory)
    assert isinstance(model, ScriptedModel)
    return StaticAgents({agent.name: (agent, model)}), model


def refund_paused(store: Any, clock: ManualClock, agents: StaticAgents) -> tuple[Turns, TurnResult]:
    """The shop's turns over ``store``, and its refund message paused on the approval."""
    turns = turns_over(store, MemoryQueue(), agents, clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    return turns, paused


def results_seen(model: ScriptedModel, call: str | None = None) -> list[ToolResultMessage]:
    """The tool results in the latest request the model was sent."""
    return [
        m
        for m in model.requests[-1].messages
        if isinstance(m, ToolResultMessage) and (call is None or m.name == call)
    ]


def test_a_deny_reason_reaches_the_model_the_event_and_the_audit(
    store: Any, clock: ManualClock
) -> None:
    agents, model = shop()
    turns, paused = refund_paused(store, clock, agents)
    done = turns.decide(paused.pending.id, Deny(note=WHY), ALICE, schedule=None).result
    assert done is not None and done.stop_reason == "denied"
    result = [e for e in done.events if e["type"] == "tool:result"][-1]
    assert result["statusText"] == "Denied."
    assert WHY in result["detailText"]
    entry = store.audit.for_subject(paused.session_id)[-1]
    assert (entry.kind, entry.decision, entry.reason) == ("human", "denied", WHY)
    # the turn stops (loop:denied); the next model call, on the next message, reads the reason
    turns.send(
        "customer-service",
        "ok, what now?",
        tenant="default",
        environment="production",
        session_id=paused.session_id,
    )
    refund = results_seen(model, "issue_refund")
    assert len(refund) == 1 and refund[0].is_error and WHY in refund[0].content


def test_approve_with_changes_runs_the_tool_with_them(store: Any, clock: ManualClock) -> None:
    agents, model = shop()
    before = dict(refunds_issued(agents))
    turns, paused = refund_paused(store, clock, agents)
    assert paused.pending.args == {"orderId": "A-1001", "amount": 42.0}
    # a form sends text: "30" is validated (and coerced) by the tool's own schema
    decided = turns.decide(paused.pending.id, Approve(args={"amount": "30"}), ALICE, schedule=None)
    assert decided.item.edited_args == {"orderId": "A-1001", "amount": 30.0}
    assert store.pending.get(paused.pending.id).edited_args == decided.item.edited_args
    issued = [r for k, r in refunds_issued(agents).items() if k not in before]
    assert [r["amount"] for r in issued] == [30.0]
    done = decided.result
    assert done is not None and done.text == (
        "Refunded 30.0 USD for order A-1001 to the original payment method."
    )
    started = [e for e in done.events if e["type"] == "tool:started"][-1]
    assert started["args"] == {"orderId": "A-1001", "amount": 30.0}
    assert started["originalArgs"] == {"orderId": "A-1001", "amount": 42.0}
    assert started["detailText"].endswith("with changes: amount 42 → 30")
    # the model asked for 42: its result says the approver changed it
    refund = results_seen(model, "issue_refund")
    assert refund[0].content.startswith("Approved with changes (amount 42 → 30).")
    entry = [a for a in store.audit.for_subject(paused.session_id) if a.kind == "human"]
    assert [(a.decision, a.reason) for a in entry] == [
        ("approved", "approved with changes: amount 42 → 30")
    ]


def test_changes_equal_to_the_request_are_a_plain_approval(clock: ManualClock) -> None:
    store = MemoryStore(clock=clock)
    agents, _ = shop()
    turns, paused = refund_paused(store, clock, agents)
    decided = turns.decide(paused.pending.id, Approve(args={"amount": 42}), ALICE, schedule=None)
    assert decided.item.edited_args is None
    assert decided.result is not None
    started = [e for e in decided.result.events if e["type"] == "tool:started"][-1]
    assert "originalArgs" not in started and "changes" not in started["detailText"]


@pytest.mark.parametrize(
    ("changes", "fields"),
    [
        ({"amount": -5}, ["amount"]),  # Field(gt=0)
        ({"amount": "thirty"}, ["amount"]),
        ({"currency": "EUR"}, ["currency"]),  # no such argument
        ({"ctx": "x"}, ["ctx"]),  # the context is the engine's, never an argument
        ({"orderId": "x" * MAX_EDIT_BYTES}, ["orderId"]),  # over the bound
    ],
)
def test_changes_the_schema_refuses_decide_nothing(
    clock: ManualClock, changes: dict[str, Any], fields: list[str]
) -> None:
    store = MemoryStore(clock=clock)
    agents, _ = shop()
    turns, paused = refund_paused(store, clock, agents)
    with pytest.raises(InvalidChanges) as refused:
        turns.decide(paused.pending.id, Approve(args=changes), ALICE, schedule=None)
    assert refused.value.fields == fields
    assert not isinstance(refused.value, NotEditable)
    assert store.pending.get(paused.pending.id).status == "pending"
    assert not [a for a in store.audit.for_subject(paused.session_id) if a.kind == "human"]


def test_a_tool_not_declared_editable_takes_no_changes(clock: ManualClock) -> None:
    @tool
    def wire_money(to: str, amount: float) -> str:
        """Wire money."""
        return f"wired {amount} to {to}"

    agent = make_agent(wire_money, rules="default_decision: ask")
    model = playing(calls(("wire_money", {"to": "x", "amount": 5})), answer("done"))
    store = MemoryStore(clock=clock)
    turns = turns_over(store, MemoryQueue(), StaticAgents({agent.name: (agent, model)}), clock)
    paused = turns.send(agent.name, "pay", tenant="default", environment="production")
    assert paused.pending is not None
    with pytest.raises(NotEditable, match="wire_money takes no changes"):
        turns.decide(paused.pending.id, Approve(args={"amount": 1}), ALICE, schedule=None)
    assert store.pending.get(paused.pending.id).status == "pending"
    done = turns.decide(paused.pending.id, Approve(), ALICE, schedule=None).result
    assert done is not None and done.text == "done"


def test_a_refused_actor_learns_nothing_of_the_schema(clock: ManualClock) -> None:
    store = MemoryStore(clock=clock)
    agents, _ = shop()
    turns, paused = refund_paused(store, clock, agents)
    with pytest.raises(Forbidden):
        turns.decide(
            paused.pending.id,
            Approve(args={"nonsense": 1}),
            ALICE,
            check=lambda item, actor: "not an approver",
            schedule=None,
        )
    refusals = [a for a in store.audit.for_subject(paused.session_id) if a.kind == "refusal"]
    assert [a.reason for a in refusals] == ["not an approver"]


def test_changes_come_only_with_an_approval() -> None:
    from signoff.durable.decide import verdict_of

    with pytest.raises(UsageError):
        verdict_of("deny", None, WHY, {"amount": 1})
    assert verdict_of("approve", None, None, {"amount": 1}) == Approve(args={"amount": 1})
