"""One broken agent never takes ``signoff dev`` down (issue 11): a YAML error in one
agent and a misspelled tool in another's rules; the stack starts, its banner names
each with its file and line, ``GET /agents`` marks both, the playground's
``GET /_local/agents`` says what is wrong, and the healthy agents serve."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from signoff_dev.local.stack import LocalStack, StackSettings
from tests.support.local_stack import REFUND, WAIT

if TYPE_CHECKING:
    from collections.abc import Iterator

AGENTS = Path(__file__).resolve().parents[2] / "agents"


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
    agents = agents_with_two_broken(tmp_path_factory.mktemp("broken"))
    console = io.StringIO()
    local = LocalStack(StackSettings(port=0, console=console, logs=console, agents=agents))
    local.start()
    try:
        yield local
    finally:
        local.stop()


@pytest.fixture
def http(stack: LocalStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=WAIT) as client:
        yield client


def test_the_banner_names_each_broken_agent_with_file_and_line(stack: LocalStack) -> None:
    from signoff_dev.cli.dev import _banner

    lines = [line for line in _banner(stack).splitlines() if "misconfigured" in line]

    root = stack.agents_dir
    assert lines == [
        f"  misconfigured  bad-yaml: {root / 'bad-yaml' / 'agent.yaml'}:5: invalid YAML: "
        "expected ',' or ']', but got '<stream end>' (line 5, column 1)",
        f"  misconfigured  typo-rules: {root / 'typo-rules' / 'actauth.yml'}:7: rules[0].tool: "
        "no tool named 'list_order' (this agent has Skill, ask_user, list_orders); "
        "the rule would never apply",
    ]


def test_get_agents_marks_them_and_the_playground_is_told_why(http: httpx.Client) -> None:
    listed = http.get("/agents")
    assert listed.status_code == 200, listed.text
    assert {a["name"]: a["status"] for a in listed.json()} == {
        "bad-yaml": "misconfigured",
        "customer-service": "ready",
        "daily-digest": "ready",
        "typo-rules": "misconfigured",
    }

    told = http.get("/_local/agents")
    assert told.status_code == 200, told.text
    problems = told.json()["problems"]
    assert sorted(problems) == ["bad-yaml", "typo-rules"]
    assert problems["typo-rules"].endswith(
        "actauth.yml:7: rules[0].tool: no tool named 'list_order' (this agent has Skill, "
        "ask_user, list_orders); the rule would never apply"
    )
    assert "agent.yaml:5: invalid YAML" in problems["bad-yaml"]
    # the page asks for them, and shows them beside the agent picker
    script = http.get("/playground.js").text
    assert 'fetch("/_local/agents")' in script and "agent-problem" in script


def test_the_healthy_agents_serve_and_the_broken_ones_say_so(http: httpx.Client) -> None:
    for broken in ("bad-yaml", "typo-rules"):
        refused = http.post(f"/agents/{broken}/messages", json={"message": "digest"})
        assert refused.status_code == 500, refused.text
        assert refused.json()["error"] == "agent_misconfigured"

    digest = http.post("/agents/daily-digest/messages", json={"message": "digest"})
    assert digest.status_code == 200, digest.text
    assert digest.json()["text"].startswith("Daily digest: 3 orders today")
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
