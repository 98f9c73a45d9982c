"""Loading agents: the samples, their tools and skills, and clear config errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.agents import AgentCatalog, load_agent
from signoff.agents.describe import describe_agent
from signoff.errors import ConfigError, UnknownAgent

AGENTS = Path(__file__).resolve().parents[3] / "agents"


def test_catalog_lists_the_sample_agents() -> None:
    assert AgentCatalog(AGENTS).names() == ["customer-service", "daily-digest"]


def test_unknown_agent_names_the_known_ones() -> None:
    with pytest.raises(UnknownAgent) as caught:
        AgentCatalog(AGENTS).get("nobody")
    assert "customer-service, daily-digest" in str(caught.value)


def test_customer_service_tools_and_safety_marks() -> None:
    agent = load_agent(AGENTS / "customer-service")
    marks = {name: (t.safe, t.idempotent) for name, t in agent.tools.items()}
    assert marks == {
        "lookup_order": (True, False),
        "get_shipment_details": (True, False),
        "issue_refund": (False, True),
        "send_email": (False, False),
    }
    schema = agent.tools["issue_refund"].parameters
    assert schema["required"] == ["orderId", "amount"]
    assert schema["properties"]["amount"]["exclusiveMinimum"] == 0
    assert "ctx" not in schema["properties"]
    assert "refund-policy" in agent.system_prompt


def test_daily_digest_has_a_schedule_and_no_approvals() -> None:
    agent = load_agent(AGENTS / "daily-digest")
    assert agent.config.schedule is not None
    assert agent.config.schedule.message == "Summarise today's orders."
    assert all(rule.decision == "allow" for rule in agent.rules.rules)


def test_describe_never_shows_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIGNOFF_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    described = describe_agent(load_agent(AGENTS / "customer-service"))
    assert described["model"]["provider"] == "openai"
    assert described["model"]["model"] == "gpt-4o-mini"
    assert "sk-very-secret-value" not in repr(described)
    assert {t["name"]: t["safe"] for t in described["tools"]}["lookup_order"] is True
    assert described["rules"]["defaultDecision"] == "deny"


def test_the_config_shows_each_rule_with_its_files_keys_and_the_file_by_its_folder(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "agents" / "refunds"
    folder.mkdir(parents=True)
    (folder / "agent.yaml").write_text("system: x\n")
    (folder / "actauth.yml").write_text(
        "default_decision: ask\n"
        "rules:\n"
        "  - name: big\n"
        "    scope: '*'\n"
        "    tool: refund\n"
        "    decision: ask\n"
        "    when: {all: [{field: amount, op: gt, value: 100}]}\n"
        "    approvals: 2\n"
        "    from: [alice, bob]\n"
        "    denyQuorum: 2\n"
    )

    described = describe_agent(load_agent(folder))

    assert described["rules"]["source"] == "refunds/actauth.yml", "not the server's path"
    [rule] = described["rules"]["rules"]
    assert rule["from"] == ["alice", "bob"] and rule["denyQuorum"] == 2
    assert rule["when"] == {"all": [{"field": "amount", "op": "gt", "value": 100}]}
    assert "from_" not in rule and "deny_quorum" not in rule


def write_agent(root: Path, agent_yaml: str, **files: str) -> Path:
    folder = root / "broken"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.yaml").write_text(agent_yaml)
    for name, text in files.items():
        path = folder / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


@pytest.mark.parametrize(
    ("agent_yaml", "field", "problem"),
    [
        ("description: no system prompt\n", "system", "Field required"),
        ("system: hi\nmaxTurns: 0\n", "maxTurns", "greater than 0"),
        ("system: hi\nmodel: {provider: gpt}\n", "model.provider", "Input should be"),
        ("system: hi\napprovalTimeout: soon\n", "approvalTimeout", "a duration"),
        ("system: hi\nsurprise: 1\n", "surprise", "Extra inputs are not permitted"),
        ("system: [unclosed\n", "", "invalid YAML"),
        ("- a list\n", "", "must be a mapping"),
    ],
)
def test_bad_agent_yaml_names_the_file_and_field(
    tmp_path: Path, agent_yaml: str, field: str, problem: str
) -> None:
    folder = write_agent(tmp_path, agent_yaml)
    with pytest.raises(ConfigError) as caught:
        load_agent(folder)
    assert caught.value.file == str(folder / "agent.yaml")
    assert caught.value.field == field
    assert problem in caught.value.problem


def test_durations_accept_units(tmp_path: Path) -> None:
    folder = write_agent(tmp_path, "system: hi\napprovalTimeout: 30m\nremindAfter: 2h\n")
    config = load_agent(folder).config
    assert (config.approval_timeout, config.remind_after) == (1800, 7200)


def test_broken_tools_module_is_a_config_error(tmp_path: Path) -> None:
    folder = write_agent(tmp_path, "system: hi\n", **{"tools.py": "import no_such_module\n"})
    with pytest.raises(ConfigError) as caught:
        load_agent(folder)
    assert caught.value.file.endswith("tools.py")
    assert "ModuleNotFoundError" in caught.value.problem


def test_tool_may_not_take_a_system_tool_name(tmp_path: Path) -> None:
    source = "from signoff.tools import tool\n@tool\ndef ask_user(q: str) -> str:\n    return q\n"
    folder = write_agent(tmp_path, "system: hi\n", **{"tools.py": source})
    with pytest.raises(ConfigError, match="system tool name"):
        load_agent(folder)


def test_skill_without_description_is_a_config_error(tmp_path: Path) -> None:
    folder = write_agent(
        tmp_path, "system: hi\n", **{"skills__x__SKILL.md": "---\nname: x\n---\nbody\n"}
    )
    with pytest.raises(ConfigError) as caught:
        load_agent(folder)
    assert caught.value.field == "description"


def test_malformed_rules_name_rule_and_field(tmp_path: Path) -> None:
    rules = "rules:\n  - {name: r1, scope: '*/*', tool: t, decision: maybe}\n"
    folder = write_agent(tmp_path, "system: hi\n", **{"actauth.yml": rules})
    with pytest.raises(ConfigError) as caught:
        load_agent(folder)
    assert caught.value.file.endswith("actauth.yml")
    assert caught.value.field == "rules[0] 'r1'.decision"
