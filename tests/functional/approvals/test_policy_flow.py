"""Every field of an approval policy, end to end, on each store adapter.

A rules file sets each field of ``ApprovalPolicy`` to a value other than its default;
the test reads the policy back at every stage it passes — the gate's verdict, the
pause, the stored item, the decision path — and compares field by field. A field
added to the model without a sample here fails the first test; one dropped (or
rebuilt from something else) on the way fails the second, naming the stage.
Adding a field: ``docs/extending.md``.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

import yaml

from signoff.agents import AgentCatalog
from signoff.durable.decide import Approve
from signoff.gate import Scope, decide
from signoff.gate.policy import ApprovalPolicy, EscalationStep
from signoff.models.factory import build_model
from signoff.queue.memory import MemoryQueue
from tests.conftest import ROOT
from tests.support.actors import person
from tests.support.durable import StaticAgents, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.agents import Agent
    from signoff.clock import ManualClock
    from tests.support.durable import Store

AGENT = "customer-service"
RULE = "refund-production-needs-approval"
REFUND = "order A-1001 arrived broken, can you refund it?"
REFUND_ARGS = {"orderId": "A-1001", "amount": 42.0}

# Each field of ApprovalPolicy: how the rules file spells a value other than the
# default, and that value as the policy holds it.
SAMPLES: dict[str, tuple[dict[str, Any], Any]] = {
    "approvals": ({"approvals": 3}, 3),
    "approvers": ({"from": ["finance-leads", "carol"]}, ("finance-leads", "carol")),
    "deny_quorum": ({"denyQuorum": 2}, 2),
    "escalate": (
        {"escalate": [{"after": "30m", "notify": "local-email"}, {"after": "8h", "then": "deny"}]},
        (
            EscalationStep(after=1800, notify=("local-email",)),
            EscalationStep(after=28800, then="deny"),
        ),
    ),
    "rule": ({"name": RULE}, RULE),
}
PEOPLE = {
    "people": {
        "alice": {"email": "alice@example.com"},
        "bob": {"email": "bob@example.com"},
        "carol": {"email": "carol@example.com"},
    },
    "groups": {"finance-leads": ["alice", "bob"]},
}


def test_every_policy_field_has_a_sample_that_is_not_its_default() -> None:
    assert set(SAMPLES) == set(ApprovalPolicy.model_fields), (
        "give each ApprovalPolicy field a sample above, so the flow below carries it"
    )
    for name, (_, value) in SAMPLES.items():
        assert value != ApprovalPolicy.model_fields[name].default, name


def _agent(root: Path) -> Agent:
    """customer-service, its asking rule setting every sample, loaded from its files."""
    shutil.copytree(ROOT / "agents", root)
    (root / "people.yaml").write_text(yaml.safe_dump(PEOPLE))
    rules_file = root / AGENT / "actauth.yml"
    rules = yaml.safe_load(rules_file.read_text())
    [rule] = [r for r in rules["rules"] if r.get("name") == RULE]
    for spelled, _ in SAMPLES.values():
        rule.update(spelled)
    rules_file.write_text(yaml.safe_dump(rules))
    return AgentCatalog(root).get(AGENT)


def test_every_policy_field_travels_from_the_rules_file_to_the_decision_path(
    store: Store, clock: ManualClock, tmp_path: Path
) -> None:
    agent = _agent(tmp_path / "agents")
    agents = StaticAgents({AGENT: (agent, build_model(agent.config.model, agent.directory))})
    turns = turns_over(store, MemoryQueue(), agents, clock)
    scope = Scope(tenant="default", environment="production", agent=AGENT)
    verdict = decide(agent.rules, "issue_refund", REFUND_ARGS, scope)

    paused = turns.send(AGENT, REFUND, tenant="default", environment="production")
    item = paused.pending
    assert paused.status == "paused" and item is not None and item.tool == "issue_refund"
    stored = store.pending.get(item.id)
    assert stored is not None
    # a vote short of the quorum: the decision path counted it under the stored policy
    voted = turns.decide(item.id, Approve(), person("alice", "email"), schedule=None).item
    assert voted.status == "pending" and voted.tally == "1 of 3 approvals — alice"

    stages = {
        "gate verdict": verdict.policy(agent_ladder=agent.config.escalate),
        "pause": item.policy,
        "stored item": stored.policy,
        "decision path": voted.policy,
    }
    for stage, policy in stages.items():
        assert policy is not None, stage
        for name, (_, value) in SAMPLES.items():
            assert getattr(policy, name) == value, f"{name} at the {stage}"
