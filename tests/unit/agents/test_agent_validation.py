"""Agents' ``notify`` checked at start, per agent (issue 12, "Validated at start").

The seed's engine rejects an agent whose ``notify`` names no registered
notifier. signoff checks every agent when a function starts (and when
``signoff dev`` starts), reports each broken one with its file and field, and
keeps serving the others; a request to a broken agent gets a clear error.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from signoff.agents import AgentCatalog
from signoff.api.errors import error_payload
from signoff.errors import ConfigError

AGENTS = Path(__file__).resolve().parents[3] / "agents"


def catalog_with_broken_agents(tmp_path: Path) -> AgentCatalog:
    root = tmp_path / "agents"
    shutil.copytree(AGENTS, root)
    for name, extra in (
        ("unknown-channel", "notify:\n  nowhere: [approval]\n"),
        ("bad-yaml", "notify: [\n"),
        ("question-to-db", ""),
    ):
        shutil.copytree(root / "daily-digest", root / name)
        agent = root / name / "agent.yaml"
        agent.write_text(agent.read_text(encoding="utf-8") + extra, encoding="utf-8")
    # a database channel takes approvals only
    (root / "channels.yaml").write_text(
        (root / "channels.yaml").read_text(encoding="utf-8")
        + "  db:\n    type: database\n    dsn: {secret: db-dsn}\n",
        encoding="utf-8",
    )
    agent = root / "question-to-db" / "agent.yaml"
    agent.write_text(
        agent.read_text(encoding="utf-8") + "notify:\n  db: [question]\n", encoding="utf-8"
    )
    return AgentCatalog(root)


def test_every_misconfigured_agent_is_reported_with_its_file_and_field(tmp_path: Path) -> None:
    catalog = catalog_with_broken_agents(tmp_path)

    problems = catalog.problems()

    assert sorted(problems) == ["bad-yaml", "question-to-db", "unknown-channel"]
    unknown = problems["unknown-channel"]
    assert unknown.file == str(catalog.root / "unknown-channel" / "agent.yaml")
    assert unknown.field == "notify.nowhere"
    assert "no channel named 'nowhere'" in unknown.problem
    assert "local-webhook" in unknown.problem  # the channels that are defined
    assert problems["bad-yaml"].field == "" and "invalid YAML" in problems["bad-yaml"].problem
    assert problems["question-to-db"].field == "notify.db"
    # the healthy agents still load
    assert catalog.get("customer-service").name == "customer-service"
    assert catalog.get("daily-digest").name == "daily-digest"


def test_the_sample_agents_have_no_problem() -> None:
    assert AgentCatalog(AGENTS).problems() == {}


def test_a_request_to_a_misconfigured_agent_says_so_without_the_deployments_paths(
    tmp_path: Path,
) -> None:
    error = ConfigError("/opt/agents/x/agent.yaml", "notify.nowhere", "no channel named 'nowhere'")

    status, body = error_payload(error)

    assert status == 500 and body["error"] == "agent_misconfigured"
    assert "configuration of this agent" in body["detail"]
    assert "/opt/agents" not in body["detail"] and "nowhere" not in body["detail"]
