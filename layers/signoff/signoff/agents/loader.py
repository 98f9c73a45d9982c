"""Finding and loading ``agents/<name>/`` folders.

An agent folder holds ``agent.yaml`` (required), ``actauth.yml`` (the rules, or
loopengine's inline ``rules`` in ``agent.yaml``, never both; no rules at all means
every call is asked about), ``tools.py`` (``@tool``
functions), ``hooks.py`` (``signoff.agents.hooks``) and
``skills/<skill>/SKILL.md``. Every problem is reported as a ``ConfigError``
naming the file and the field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pydantic import ValidationError

from signoff import yamldocs
from signoff.agents.agent import Agent
from signoff.agents.config import AgentConfig
from signoff.agents.hooks import load_hooks
from signoff.agents.lint import SYSTEM_TOOLS, rule_warnings_for
from signoff.agents.modules import import_agent_file
from signoff.agents.skills import discover_skills
from signoff.channels.config import ChannelsConfig, check_agent_notify
from signoff.channels.http_notifier import channel_name, deployment_channels, http_notifier_channel
from signoff.errors import ConfigError, UnknownAgent
from signoff.gate import RuleSet, load_rules, rules_from
from signoff.gate.people import PEOPLE_FILE, People, check_policies, load_people
from signoff.gate.rules import describe_yaml_error
from signoff.tools import Tool

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from signoff.gate.rules import Rule

__all__ = ["AgentCatalog", "load_agent"]

RESERVED_TOOLS = SYSTEM_TOOLS
RULES_FILE = "actauth.yml"


class AgentCatalog:
    """The agents under one root folder, loaded once each on first use, and their channels."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._loaded: dict[str, Agent] = {}
        self._channels: ChannelsConfig | None = None
        self._people: People | None = None

    @property
    def channels(self) -> ChannelsConfig:
        """The deployment's channels, from ``<root>/channels.yaml`` and the agents'
        ``httpNotifier`` (``deployment_channels``), loaded on first use.

        Raises:
            ConfigError: ``channels.yaml`` is invalid.
        """
        if self._channels is None:
            self._channels = deployment_channels(self.root)
        return self._channels

    @property
    def people(self) -> People:
        """The deployment's people and groups (``<root>/people.yaml``), loaded on first use.

        Raises:
            ConfigError: ``people.yaml`` is invalid.
        """
        if self._people is None:
            self._people = load_people(self.root / PEOPLE_FILE)
        return self._people

    def _people_if_valid(self) -> People | None:
        """The directory for an agent whose rules do not need it: a broken file breaks
        only the agents that count people (``signoff check`` names it)."""
        try:
            return self.people
        except ConfigError:
            return None

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob("*/agent.yaml"))

    def problems(self) -> dict[str, ConfigError]:
        """Each agent's configuration problem, by agent name; healthy agents are absent.

        What a cold start, ``signoff dev`` and ``signoff check`` check, so an agent
        whose ``notify`` names no defined channel is refused before it runs: every
        agent loads whole — ``agent.yaml``, its ``notify`` against
        ``channels.yaml``, the rules, ``tools.py``, hooks and skills. A rule naming a
        tool the agent lacks is no problem here but one of the agent's ``warnings``.
        Per agent, so one broken agent is reported and the others still serve; each
        healthy agent stays loaded for its first request.
        """
        found: dict[str, ConfigError] = {}
        for name in self.names():
            try:
                self.get(name)
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
            agent = load_agent(self.root / name, channels=self.channels)
            counts = any(_counts_people(rule) for rule in agent.rules.rules)
            if counts:
                check_policies(agent.rules.rules, self.people, str(agent.rules_file))
            # Read for agents whose rules count people, and whenever the deployment has
            # a directory: an item paused before a rules change keeps its policy, and its
            # votes must still count a person once across channels.
            if counts:
                agent = replace(agent, people=self.people)
            elif (self.root / PEOPLE_FILE).is_file():
                agent = replace(agent, people=self._people_if_valid())
            self._loaded[name] = agent
        return self._loaded[name]


def _counts_people(rule: Rule) -> bool:
    """Whether the rule's asks are decided by more than one person, or by named ones."""
    return rule.approvals > 1 or rule.deny_quorum > 1 or bool(rule.from_)


def load_agent(directory: Path, channels: ChannelsConfig | None = None) -> Agent:
    """Load and validate the agent in ``directory``; ``notify`` is checked against ``channels``.

    Raises:
        ConfigError: a file is missing, unreadable or invalid, or ``notify`` names a
            channel that ``channels`` does not define.
    """
    name = directory.name
    file = directory / "agent.yaml"
    config = _load_config(file)
    if channels is not None:
        _check_notify(name, str(file), config.notify, channels)
    rules_file: Path | None = directory / RULES_FILE
    if rules_file is not None and rules_file.exists():
        rules = load_rules(rules_file, name)
    elif config.rules is not None or config.default_decision is not None:
        inline: dict[str, object] = {"rules": config.rules or []}
        if config.default_decision is not None:
            inline["default_decision"] = config.default_decision
        rules_file = file
        rules = rules_from(inline, str(file), name)
    else:
        rules_file, rules = None, RuleSet()
    tools = _load_tools(directory / "tools.py", name)
    return Agent(
        name=name,
        directory=directory,
        config=config,
        tools=tools,
        rules=rules,
        skills=discover_skills(directory / "skills"),
        hooks=load_hooks(directory / "hooks.py", name),
        rules_file=rules_file,
        # A rule for a tool the agent lacks (a typo) never applies, but actauth loads
        # it and decides the other calls as before, so signoff does too: a warning.
        warnings=tuple(rule_warnings_for(rules.rules, tools)),
    )


def _load_config(path: Path) -> AgentConfig:
    try:
        raw = yamldocs.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(str(path), "", "file not found") from exc
    except yamldocs.YAMLError as exc:
        # One line with where it is, as actauth.yml's errors say it.
        raise ConfigError(str(path), "", f"invalid YAML: {describe_yaml_error(exc)}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(str(path), "", "must be a mapping of settings")
    try:
        config = AgentConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        # A whole-file check (loopengine's keys) names its key in ctx, not in loc.
        named = err.get("ctx", {}).get("field", "")
        field = ".".join(str(p) for p in err["loc"]) or named or "(root)"
        raise ConfigError(str(path), field, err["msg"]) from exc
    return _loopengine_form(config, path)


def _loopengine_form(config: AgentConfig, path: Path) -> AgentConfig:
    """``config`` with loopengine's ``name``, inline rules and ``httpNotifier`` checked
    against the folder, and the httpNotifier's channel added to ``notify``.

    Raises:
        ConfigError: ``name`` is not the folder's, both inline rules and ``actauth.yml``
            are present (or ``defaultDecision`` beside ``actauth.yml``), or the
            httpNotifier is invalid.
    """
    agent, file = path.parent.name, str(path)
    if config.name is not None and config.name != agent:
        raise ConfigError(
            file, "name", f"is {config.name!r}, but an agent's name is its folder's ({agent!r})"
        )
    if (path.parent / RULES_FILE).exists():
        # Two sources of rules would leave a reader guessing which one decides.
        if config.rules is not None:
            raise ConfigError(
                file, "rules", f"inline rules and {RULES_FILE} both present: keep one of them"
            )
        if config.default_decision is not None:
            raise ConfigError(
                file,
                "defaultDecision",
                f"belongs to the inline rules form; {RULES_FILE} has its own default_decision",
            )
    if config.http_notifier is None:
        return config
    own = channel_name(agent)
    if own in config.notify:
        raise ConfigError(file, f"notify.{own}", "is the httpNotifier's channel: list it once")
    http_notifier_channel(agent, config.http_notifier, file)  # refuses bad settings, by key
    notify = {**config.notify, own: list(config.http_notifier.events)}
    return config.model_copy(update={"notify": notify})


def _check_notify(
    agent: str, file: str, notify: Mapping[str, Sequence[str]], channels: ChannelsConfig
) -> None:
    """``check_agent_notify`` for every channel but the agent's own httpNotifier's,
    which ``_loopengine_form`` has checked (and which a given ``channels`` may lack)."""
    own = channel_name(agent)
    check_agent_notify(file, {n: e for n, e in notify.items() if n != own}, channels)


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
