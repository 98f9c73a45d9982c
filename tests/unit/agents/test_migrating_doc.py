"""docs/migrating-from-loopengine.md shows what the code does: its agent.yaml and inline
rules load as the page says, and the error it quotes is the one signoff prints."""

from __future__ import annotations

import re
import shutil
from typing import TYPE_CHECKING

import pytest
import yaml

from signoff.agents import AgentCatalog
from signoff.errors import ConfigError
from tests.support.loopengine import SAMPLE

if TYPE_CHECKING:
    from pathlib import Path

DOC = SAMPLE.parents[1] / "docs" / "migrating-from-loopengine.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def block(first_line: str) -> str:
    [found] = [b for b in BLOCKS if b.startswith(first_line)]
    return found


def folder(tmp_path: Path, agent_yaml: str) -> AgentCatalog:
    agent = tmp_path / "agents" / "customer-service"
    agent.mkdir(parents=True)
    shutil.copy(SAMPLE / "tools.py", agent / "tools.py")
    (agent / "agent.yaml").write_text(agent_yaml, encoding="utf-8")
    return AgentCatalog(tmp_path / "agents")


def test_the_pages_agent_yaml_with_its_inline_rules_loads_as_described(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = block("# agents/customer-service/agent.yaml") + block("defaultDecision: deny")
    catalog = folder(tmp_path, config)

    agent = catalog.get("customer-service")
    assert agent.system_prompt.startswith("You are the customer-service agent")
    assert agent.config.max_turns == 8
    assert agent.config.notify == {
        "httpNotifier-customer-service": ["approval", "question", "run_finish"]
    }
    assert catalog.channels.settings("httpNotifier-customer-service") is not None
    assert [rule.name for rule in agent.rules.rules] == ["refunds-need-approval"]
    assert agent.rules.default_decision == "deny"


def test_the_error_the_page_quotes_is_the_one_signoff_gives(tmp_path: Path) -> None:
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    [quoted] = re.findall(r"— `(agents/customer-service/agent\.yaml: onRunFinish: [^`]*)`", text)
    config = yaml.safe_dump({"systemPrompt": "s", "onRunFinish": "(ctx) => log(ctx)"})
    catalog = folder(tmp_path, config)

    with pytest.raises(ConfigError) as caught:
        catalog.get("customer-service")
    assert str(caught.value) == str(tmp_path / quoted)


def test_the_pages_channels_yaml_is_a_valid_channel_for_notify(tmp_path: Path) -> None:
    channels, agent_part = block("# agents/channels.yaml").split(
        "# agents/customer-service/agent.yaml\n"
    )
    catalog = folder(tmp_path, "systemPrompt: s\n" + agent_part)
    (tmp_path / "agents" / "channels.yaml").write_text(channels, encoding="utf-8")

    assert catalog.problems() == {}
    assert catalog.get("customer-service").config.notify == {
        "ops-webhook": ["approval", "question", "run_finish"]
    }
