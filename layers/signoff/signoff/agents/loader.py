"""Finding and loading ``agents/<name>/`` folders.

An agent folder holds ``agent.yaml`` (required), ``actauth.yml`` (the rules; a
missing file means every call is asked about), ``tools.py`` (``@tool``
functions), ``hooks.py`` (``signoff.agents.hooks``) and
``skills/<skill>/SKILL.md``. Every problem is reported as a ``ConfigError``
naming the file and the field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml
from pydantic import ValidationError

from signoff.agents.agent import Agent
from signoff.agents.config import AgentConfig
from signoff.agents.hooks import load_hooks
from signoff.agents.modules import import_agent_file
from signoff.channels.config import CHANNELS_FILE, ChannelsConfig, check_agent_notify, load_channels
from signoff.errors import ConfigError, UnknownAgent
from signoff.gate import RuleSet, load_rules
from signoff.skills import discover_skills
from signoff.tools import Tool

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["AgentCatalog", "load_agent"]

RESERVED_TOOLS = frozenset({"ask_user", "Skill"})


class AgentCatalog:
    """The agents under one root folder, loaded once each on first use, and their channels."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._loaded: dict[str, Agent] = {}
        self._channels: ChannelsConfig | None = None

    @property
    def channels(self) -> ChannelsConfig:
        """The deployment's channels, from ``<root>/channels.yaml``, loaded on first use.

        Raises:
            ConfigError: ``channels.yaml`` is invalid.
        """
        if self._channels is None:
            self._channels = load_channels(self.root / CHANNELS_FILE)
        return self._channels

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob("*/agent.yaml"))

    def problems(self) -> dict[str, ConfigError]:
        """Each agent's configuration problem, by agent name; healthy agents are absent.

        What a cold start checks (seed 004: the engine rejects an agent whose
        ``notify`` names no registered notifier): every ``agent.yaml`` parses, and
        its ``notify`` names channels that ``channels.yaml`` defines. Per agent, so
        one broken agent is reported and the others still serve. Cheap: the tools,
        rules and skills are loaded on first use, as before.
        """
        found: dict[str, ConfigError] = {}
        for name in self.names():
            file = self.root / name / "agent.yaml"
            try:
                check_agent_notify(str(file), _load_config(file).notify, self.channels)
            except ConfigError as exc:
                found[name] = exc
        return found

    def get(self, name: str) -> Agent:
        """The agent called ``name``.

        Raises:
            UnknownAgent: no such folder.
            ConfigError: the agent's files, or ``channels.yaml``, are invalid, or its
                ``notify`` names a channel that is not defined.
        """
        if name not in self._loaded:
            if name not in self.names():
                raise UnknownAgent(name, self.names())
            self._loaded[name] = load_agent(self.root / name, channels=self.channels)
        return self._loaded[name]


def load_agent(directory: Path, channels: ChannelsConfig | None = None) -> Agent:
    """Load and validate the agent in ``directory``; ``notify`` is checked against ``channels``.

    Raises:
        ConfigError: a file is missing, unreadable or invalid, or ``notify`` names a
            channel that ``channels`` does not define.
    """
    name = directory.name
    config = _load_config(directory / "agent.yaml")
    if channels is not None:
        check_agent_notify(str(directory / "agent.yaml"), config.notify, channels)
    rules_file = directory / "actauth.yml"
    rules = load_rules(rules_file, name) if rules_file.exists() else RuleSet()
    return Agent(
        name=name,
        directory=directory,
        config=config,
        tools=_load_tools(directory / "tools.py", name),
        rules=rules,
        skills=discover_skills(directory / "skills"),
        hooks=load_hooks(directory / "hooks.py", name),
    )


def _load_config(path: Path) -> AgentConfig:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(str(path), "", "file not found") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), "", f"invalid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(str(path), "", "must be a mapping of settings")
    try:
        return AgentConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"]) or "(root)"
        raise ConfigError(str(path), field, err["msg"]) from exc


def _load_tools(path: Path, agent: str) -> dict[str, Tool]:
    if not path.exists():
        return {}
    module = import_agent_file(path, "signoff_agent_tools", agent)
    tools: dict[str, Tool] = {}
    for attribute, value in vars(module).items():
        if not isinstance(value, Tool):
            continue
        if value.name in RESERVED_TOOLS:
            raise ConfigError(str(path), attribute, f"{value.name!r} is a system tool name")
        if value.name in tools:
            raise ConfigError(str(path), attribute, f"duplicate tool name {value.name!r}")
        tools[value.name] = value
    return tools
