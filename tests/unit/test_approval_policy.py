"""Approval policies in the rules and agent.yaml, and the policy a pause fixes on its item."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from signoff.agents import Agent, AgentConfig
from signoff.durable.pausing import pending_item
from signoff.engine import TurnState
from signoff.events import ApprovalPending, PendingScope, QuestionPending
from signoff.gate import RuleSet, rule_warnings
from signoff.gate.policy import ApprovalPolicy, EscalationStep
from tests.support.builders import T0

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


def _agent(rules: str = RULES, **config: Any) -> Agent:
    return Agent(
        name="refunds-agent",
        directory=Path("/nonexistent"),
        config=AgentConfig.model_validate({"system": "x", "notify": ["console"], **config}),
        tools={},
        rules=RuleSet.model_validate(yaml.safe_load(rules)),
        skills={},
    )


def _paused(agent: Agent, amount: int) -> ApprovalPolicy | None:
    state = TurnState(
        session_id="s1", run_id="r1", agent=agent.name, tenant="acme", environment="production"
    )
    state.awaiting_call = "c1"
    pending = ApprovalPending(
        id="p1",
        tool="issue_refund",
        args={"amount": amount},
        scope=PendingScope(tenant="acme", environment="production", agent=agent.name),
        reason="matched rule 'x'",
        requested_at="2026-01-01T00:00:00.000Z",
    )
    return pending_item(agent, state, pending, T0).policy


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
    state = TurnState(
        session_id="s1", run_id="r1", agent=agent.name, tenant="acme", environment="production"
    )
    state.awaiting_call = "c1"
    question = QuestionPending(
        id="q1",
        question="Which order?",
        agent=agent.name,
        session_id="s1",
        requested_at="2026-01-01T00:00:00.000Z",
    )
    item = pending_item(agent, state, question, T0)
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
