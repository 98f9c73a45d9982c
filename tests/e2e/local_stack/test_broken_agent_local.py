"""One broken agent never takes ``signoff dev`` down (issue 11): a YAML error in one
agent; the stack starts, its banner names it with its file and line, ``GET /agents``
marks it, the playground's ``GET /_local/agents`` says what is wrong, and the healthy
agents serve. A misspelled tool in another agent's rules is a warning (issue 13:
actauth loads the file): that agent is ready and serves, the banner and
``GET /_local/agents`` name the rule's file and line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.local_stack import REFUND, running_stack
from tests.support.local_stack import http as http

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

    from signoff_dev.local.stack import LocalStack

AGENTS = Path(__file__).resolve().parents[3] / "agents"
# What typo-rules' misspelled tool draws (signoff.agents.lint).
TYPO_WARNING = (
    "rules[0] 'list-orders-anywhere'.tool: no tool named 'list_order'; the rule never applies; "
    "did you mean 'list_orders'? (this agent has Skill, ask_user, list_orders)"
)


def agents_with_two_broken(root: Path) -> Path:
    agents = root / "agents"
    shutil.copytree(AGENTS, agents, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(agents / "daily-digest", agents / "bad-yaml")
    (agents / "bad-yaml" / "agent.yaml").write_text(
        "description: broken\nmodel:\n  provider: scripted\n  script: [script.yaml\n",
        encoding="utf-8",
    )
    shutil.copytree(agents / "daily-digest", agents / "typo-rules")
    rules = agents / "typo-rules" / "actauth.yml"
    rules.write_text(
        rules.read_text(encoding="utf-8").replace("tool: list_orders", "tool: list_order"),
        encoding="utf-8",
    )
    return agents


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with running_stack(agents_with_two_broken(tmp_path_factory.mktemp("broken"))) as local:
        yield local


def test_the_banner_names_the_broken_agent_and_the_typo_with_file_and_line(
    stack: LocalStack,
) -> None:
    from signoff_dev.cli.dev import _banner

    banner = _banner(stack).splitlines()
    lines = [line for line in banner if "misconfigured" in line or "  warning  " in line]

    root = stack.agents_dir
    assert lines == [
        f"  misconfigured  bad-yaml: {root / 'bad-yaml' / 'agent.yaml'}:5: invalid YAML: "
        "expected ',' or ']', but got '<stream end>' (line 5, column 1)",
        f"  warning  typo-rules: {root / 'typo-rules' / 'actauth.yml'}:7: {TYPO_WARNING}",
    ]


def test_get_agents_marks_the_broken_one_and_the_playground_is_told_why(
    http: httpx.Client,
) -> None:
    listed = http.get("/agents")
    assert listed.status_code == 200, listed.text
    assert {a["name"]: a["status"] for a in listed.json()} == {
        "bad-yaml": "misconfigured",
        "customer-service": "ready",
        "daily-digest": "ready",
        "typo-rules": "ready",
    }

    told = http.get("/_local/agents")
    assert told.status_code == 200, told.text
    problems = told.json()["problems"]
    assert sorted(problems) == ["bad-yaml"]
    assert "agent.yaml:5: invalid YAML" in problems["bad-yaml"]
    warnings = told.json()["warnings"]
    assert sorted(warnings) == ["typo-rules"]
    (warning,) = warnings["typo-rules"]
    assert warning.endswith(f"actauth.yml:7: {TYPO_WARNING}")
    # the page asks for them, and shows them beside the agent picker
    script = http.get("/playground.js").text
    assert 'fetch("/_local/agents")' in script and "agent-problem" in script


def test_the_healthy_agents_serve_and_the_broken_one_says_so(http: httpx.Client) -> None:
    refused = http.post("/agents/bad-yaml/messages", json={"message": "digest"})
    assert refused.status_code == 500, refused.text
    assert refused.json()["error"] == "agent_misconfigured"

    digest = http.post("/agents/daily-digest/messages", json={"message": "digest"})
    assert digest.status_code == 200, digest.text
    assert digest.json()["text"].startswith("Daily digest: 3 orders today")
    # typo-rules serves; its typo'd rule never applies, so list_orders falls to the
    # file's default (deny), as actauth decides it
    typo = http.post("/agents/typo-rules/messages", json={"message": "digest"})
    assert typo.status_code == 200, typo.text
    assert typo.json()["text"].startswith("The digest could not be made"), typo.json()
    refund = http.post("/agents/customer-service/messages", json={"message": REFUND})
    assert refund.status_code == 202, refund.text
    with http.stream(
        "POST", "/agents/daily-digest/messages/stream", json={"message": "digest"}
    ) as streamed:
        assert streamed.status_code == 200
        assert "event: done" in "".join(streamed.iter_text())


def test_a_new_agent_is_served_at_once_by_the_running_stack(
    stack: LocalStack, http: httpx.Client
) -> None:
    from signoff_dev.cli.new import scaffold

    scaffold(stack.agents_dir, "fresh-agent")  # what `signoff new fresh-agent` writes

    listed = {a["name"]: a["status"] for a in http.get("/agents").json()}
    assert listed["fresh-agent"] == "ready"
    sent = http.post("/agents/fresh-agent/messages", json={"message": "credit 10"})
    assert sent.status_code == 202, sent.text  # its one rule asks a person
    assert sent.json()["tool"] == "issue_credit"
