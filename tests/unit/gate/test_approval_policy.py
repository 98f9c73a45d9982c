"""Approval policies in the rules and agent.yaml, and the policy a pause fixes on its item
(the gate's verdict, carried by the pause: nothing decides the call again)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from pydantic import ValidationError

from signoff.agents import Agent, AgentConfig
from signoff.clock import ManualClock
from signoff.durable.pausing import pending_item
from signoff.engine import TurnState
from signoff.engine.gating import Gating
from signoff.engine.state import CallState
from signoff.gate import RuleSet, rule_warnings
from signoff.gate.policy import ApprovalPolicy, EscalationStep
from signoff.messages import ToolCall
from signoff.tools import tool
from tests.support.builders import T0

if TYPE_CHECKING:
    from signoff.store.pending_records import PendingItem

RULES = """
default_decision: ask
rules:
  - name: big-refunds
    scope: "*/production/*"
    tool: issue_refund
    decision: ask
    when: {field: amount, op: gt, value: 100}
    approvals: 2
    from: [alice, finance-leads]
    denyQuorum: 2
    escalate:
      - {after: 30m, notify: slack-leads}
      - {after: 2h, notify: [email-oncall, lark]}
      - {after: 8h, then: approve}
  - name: refunds
    scope: "*/production/*"
    tool: issue_refund
    decision: ask
"""

AGENT_LADDER = [{"after": "1h", "notify": "email-oncall"}, {"after": "1d", "then": "deny"}]


@tool
def issue_refund(amount: int) -> str:
    """Refunds an order."""
    return f"refunded {amount}"


def _agent(rules: str = RULES, **config: Any) -> Agent:
    return Agent(
        name="refunds-agent",
        directory=Path("/nonexistent"),
        config=AgentConfig.model_validate({"system": "x", "notify": ["console"], **config}),
        tools={issue_refund.name: issue_refund},
        rules=RuleSet.model_validate(yaml.safe_load(rules)),
        skills={},
    )


def _gated(agent: Agent, name: str, args: dict[str, Any]) -> PendingItem:
    """The item of the pause the gate makes of one call, as a turn's commit builds it."""
    state = TurnState(
        session_id="s1", run_id="r1", agent=agent.name, tenant="acme", environment="production"
    )
    state.batch = [CallState(call=ToolCall(id="c1", name=name, args=args))]
    gating = Gating(agent=agent, clock=ManualClock(), new_id=lambda: "p1")
    pause = gating.gate(state, lambda _: None)
    assert pause is not None and state.awaiting_call == "c1"
    return pending_item(agent, state, pause.pending, T0, policy=pause.policy)


def _paused(agent: Agent, amount: int) -> ApprovalPolicy | None:
    return _gated(agent, "issue_refund", {"amount": amount}).policy


def test_the_asking_rules_policy_is_fixed_on_the_item() -> None:
    policy = _paused(_agent(escalate=AGENT_LADDER), 500)
    assert policy == ApprovalPolicy(
        approvals=2,
        approvers=("alice", "finance-leads"),
        deny_quorum=2,
        escalate=(
            EscalationStep(after=1800, notify=("slack-leads",)),
            EscalationStep(after=7200, notify=("email-oncall", "lark")),
            EscalationStep(after=28800, then="approve"),
        ),
        rule="big-refunds",
    )


def test_a_rule_without_a_ladder_takes_the_agents() -> None:
    policy = _paused(_agent(escalate=AGENT_LADDER), 50)
    assert policy is not None
    assert (policy.approvals, policy.rule) == (1, "refunds")
    assert [(s.after, s.notify, s.then) for s in policy.escalate] == [
        (3600, ("email-oncall",), None),
        (86400, (), "deny"),
    ]


def test_a_plain_ask_stores_no_policy() -> None:
    assert _paused(_agent(), 50) is None
    # the default decision asked: the agent's ladder, no rule
    default = _agent("default_decision: ask", escalate=AGENT_LADDER)
    policy = _paused(default, 50)
    assert policy is not None and policy.rule is None and len(policy.escalate) == 2


def test_a_question_climbs_the_agents_ladder() -> None:
    agent = _agent(escalate=AGENT_LADDER)
    item = _gated(agent, "ask_user", {"question": "Which order?"})
    assert item.kind == "question"
    assert item.policy is not None and item.policy.escalate[0].notify == ("email-oncall",)


@pytest.mark.parametrize(
    ("ladder", "problem"),
    [
        ([{"after": "2h", "notify": "a"}, {"after": "1h", "notify": "b"}], "later than step 1"),
        ([{"after": "1h", "then": "deny"}, {"after": "2h", "notify": "b"}], "only the last"),
        ([{"after": "1h"}], "notifies channels"),
        ([{"after": "1h", "then": "approve"}], "'then: deny' only"),
        ([{"after": "soon", "notify": "a"}], "a duration like"),
    ],
)
def test_an_agent_ladder_is_checked(ladder: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        AgentConfig.model_validate({"system": "x", "escalate": ladder})


def test_a_rule_may_end_its_own_ladder_in_approve_but_not_out_of_order() -> None:
    bad = RULES.replace("after: 8h", "after: 1m")
    with pytest.raises(ValidationError, match="escalation step 3 must come later"):
        RuleSet.model_validate(yaml.safe_load(bad))


def test_policy_keys_are_known_to_the_linter_and_flagged_off_an_ask() -> None:
    raw = yaml.safe_load(RULES)
    assert rule_warnings(raw) == []
    raw["rules"][1] |= {"decision": "allow", "approvals": 2}
    assert rule_warnings(raw) == [
        "rules[1] 'refunds': approvals apply only to a rule that asks; this one decides 'allow'"
    ]
