"""Rules checked against their agent's tools (issue 11): a typo is an error wherever the
agent loads — ``problems()``, which every function's cold start logs — and what can be
meant is a warning for ``signoff check``."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from signoff.agents import AgentCatalog
from signoff.agents.lint import rule_warnings_for
from signoff.aws.turns import checked_agents
from signoff.gate import rules_from

if TYPE_CHECKING:
    import pytest

AGENTS = Path(__file__).resolve().parents[2] / "agents"


def with_rules(tmp_path: Path, rules: str) -> AgentCatalog:
    root = tmp_path / "agents"
    shutil.copytree(AGENTS, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "daily-digest" / "actauth.yml").write_text(rules, encoding="utf-8")
    return AgentCatalog(root)


def test_a_rule_on_a_missing_tool_is_a_problem_a_cold_start_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = with_rules(
        tmp_path, "rules:\n  - {name: r, scope: '*', tool: list_order, decision: allow}\n"
    )

    problems = catalog.problems()

    assert sorted(problems) == ["daily-digest"]
    problem = problems["daily-digest"]
    assert problem.file == str(catalog.root / "daily-digest" / "actauth.yml")
    assert problem.field == "rules[0].tool"
    assert "no tool named 'list_order'" in problem.problem
    assert catalog.get("customer-service").name == "customer-service"  # the others serve

    class Deployment:
        agents_dir = catalog.root

    with caplog.at_level(logging.ERROR, logger="signoff"):
        checked_agents(Deployment())  # type: ignore[arg-type]
    logged = [r.__dict__ for r in caplog.records if r.getMessage() == "agent misconfigured"]
    assert [(r["agent"], r["field"]) for r in logged] == [("daily-digest", "rules[0].tool")]


def test_system_tools_and_globs_are_no_error(tmp_path: Path) -> None:
    catalog = with_rules(
        tmp_path,
        "rules:\n"
        "  - {scope: '*', tool: ask_user, decision: allow}\n"
        "  - {scope: '*', tool: 'list_*', decision: allow,\n"
        "     when: {field: nope, op: eq, value: 1}}\n",
    )
    assert catalog.problems() == {}


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
