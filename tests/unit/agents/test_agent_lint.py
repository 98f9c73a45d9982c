"""Rules checked against their agent's tools (issues 11 and 13): a typo — a rule for a
tool the agent lacks, a ``when`` on an argument its tool does not take — is a warning
the agent carries (``Agent.warnings``, with the closest name), which a cold start logs;
the agent loads, serves, and decides every call as actauth does, since actauth accepts
the file. What can be meant is a warning for ``signoff check`` too."""

from __future__ import annotations

import itertools
import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import actauth

from signoff.agents import AgentCatalog
from signoff.agents.lint import rule_warnings_for
from signoff.aws.turns import checked_agents
from signoff.gate import Scope, decide, rules_from
from tests.contract.gate.test_actauth_parity import actauth_decides

if TYPE_CHECKING:
    import pytest

AGENTS = Path(__file__).resolve().parents[3] / "agents"


def with_rules(tmp_path: Path, rules: str, agent: str = "daily-digest") -> AgentCatalog:
    root = tmp_path / "agents"
    shutil.copytree(AGENTS, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / agent / "actauth.yml").write_text(rules, encoding="utf-8")
    return AgentCatalog(root)


def test_a_rule_on_a_missing_tool_is_a_warning_a_cold_start_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = with_rules(
        tmp_path, "rules:\n  - {name: r, scope: '*', tool: list_order, decision: allow}\n"
    )

    assert catalog.problems() == {}  # it loads: actauth accepts the file
    agent = catalog.get("daily-digest")
    assert agent.rules_file == catalog.root / "daily-digest" / "actauth.yml"
    assert agent.warnings == (
        "rules[0] 'r'.tool: no tool named 'list_order'; the rule never applies; "
        "did you mean 'list_orders'? (this agent has Skill, ask_user, list_orders)",
    )

    class Deployment:
        agents_dir = catalog.root

    with caplog.at_level(logging.WARNING, logger="signoff"):
        checked_agents(Deployment())  # type: ignore[arg-type]
    assert [r for r in caplog.records if r.getMessage() == "agent misconfigured"] == []
    logged = [r.__dict__ for r in caplog.records if r.getMessage() == "agent rule warning"]
    assert [(r["levelname"], r["agent"], r["file"], r["warning"]) for r in logged] == [
        ("WARNING", "daily-digest", str(agent.rules_file), agent.warnings[0])
    ]


def test_a_when_on_a_missing_argument_is_a_warning_with_the_closest_name(tmp_path: Path) -> None:
    catalog = with_rules(
        tmp_path,
        "rules:\n"
        "  - {scope: '*', tool: list_orders, decision: allow,\n"
        "     when: {all: [{field: dya, op: eq, value: 1}, {field: zzz, op: eq, value: 1}]}}\n",
    )

    assert catalog.get("daily-digest").warnings == (
        "rules[0].when.all[0].field: list_orders has no argument 'dya'; the condition never "
        "holds, so the rule never applies; did you mean 'day'? (it takes day)",
        "rules[0].when.all[1].field: list_orders has no argument 'zzz'; the condition never "
        "holds, so the rule never applies (it takes day)",
    )


def test_a_file_actauth_accepts_naming_a_missing_tool_loads_and_decides_as_actauth(
    tmp_path: Path,
) -> None:
    # Given customer-service's rules with a typo'd tool in one rule (actauth loads it)
    rules = (AGENTS / "customer-service" / "actauth.yml").read_text(encoding="utf-8")
    typo = rules.replace(
        "    tool: issue_refund\n    decision: ask", "    tool: issue_refnd\n    decision: ask"
    )
    assert typo != rules
    catalog = with_rules(tmp_path, typo, agent="customer-service")
    path = catalog.root / "customer-service" / "actauth.yml"
    gate = actauth.Gate.from_config(path)

    # When the agent loads through the loader, as a function's cold start loads it
    agent = catalog.get("customer-service")

    # Then it serves, warns about the typo, and every call decides as actauth decides it
    assert catalog.problems() == {}
    (warning,) = agent.warnings
    assert warning.startswith("rules[5] 'refund-production-needs-approval'.tool: no tool named")
    assert "did you mean 'issue_refund'?" in warning
    grid = itertools.product(
        [*agent.tools, "issue_refnd"], ["acme-corp", "globex"], ["production", "staging"]
    )
    for tool, tenant, environment in grid:
        scope = Scope(tenant=tenant, environment=environment, agent="customer-service")
        args = {"orderId": "A-1001", "amount": 500}
        verdict = decide(agent.rules, tool, args, scope)
        assert (verdict.decision, verdict.reason, verdict.rule) == actauth_decides(
            gate, tool, args, scope
        )
    # the typo'd rule never applies: globex's production refund falls to the default
    scope = Scope(tenant="globex", environment="production", agent="customer-service")
    assert decide(agent.rules, "issue_refund", {"amount": 500}, scope).decision == "deny"


def test_a_system_tool_is_no_warning_a_glob_warns_of_a_field_its_tools_lack(tmp_path: Path) -> None:
    catalog = with_rules(
        tmp_path,
        "rules:\n"
        "  - {scope: '*', tool: ask_user, decision: allow}\n"
        "  - {scope: '*', tool: 'list_*', decision: allow,\n"
        "     when: {field: nope, op: eq, value: 1}}\n",
    )
    assert catalog.problems() == {}
    # the glob matches list_orders, which lacks `nope`: a warning, not a typo of a name
    assert catalog.get("daily-digest").warnings == (
        "rules[1].when.field: list_orders take no argument 'nope'; "
        "for them the condition never holds",
    )


def test_a_glob_whose_tools_lack_the_when_field_is_a_warning() -> None:
    from signoff.agents import load_agent

    tools = load_agent(AGENTS / "customer-service").tools
    rules = rules_from(
        {
            "rules": [
                {
                    "scope": "*/*",
                    "tool": "issue_*",
                    "decision": "ask",
                    "when": {"all": [{"field": "amount", "op": "gt", "value": 1}]},
                },
                {"scope": "*/prod/*", "tool": "lookup_*", "decision": "allow"},
            ]
        },
        "actauth.yml",
        "customer-service",
    ).rules

    assert rule_warnings_for(rules, tools, None) == []
    assert rule_warnings_for(rules, tools, ["production"]) == [
        "rules[1].scope: environment 'prod' is none the template allows (production); "
        "the rule applies only where it is"
    ]
    lookup = rules_from(
        {
            "rules": [
                {
                    "scope": "*",
                    "tool": "*",
                    "decision": "ask",
                    "when": {"field": "orderId", "op": "eq", "value": "A"},
                }
            ]
        },
        "actauth.yml",
        "customer-service",
    ).rules
    (warning,) = rule_warnings_for(lookup, tools, None)
    assert warning.startswith("rules[0].when.field: ") and "take no argument 'orderId'" in warning
    assert "send_email" in warning and "lookup_order" not in warning
