"""An agent's gate rules, in loopengine's ``actauth.yml`` format, and their loader.

::

    default_decision: deny            # allow | ask | deny; absent means ask
    rules:
      - name: refund-production-needs-approval
        scope: "*/production"         # tenant/environment[/agent], `*` wildcards
        tool: issue_refund            # exact name or a `*` glob
        decision: ask
        when: {field: amount, op: gt, value: 100}

A scope without an agent segment is bound to the agent that owns the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from signoff.errors import ConfigError, UsageError
from signoff.gate.conditions import Condition  # noqa: TC001 - pydantic needs it at runtime

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Decision", "Rule", "RuleSet", "load_rules", "rules_from"]

Decision = Literal["allow", "ask", "deny"]

_PROBLEMS = {
    "missing": "required",
    "extra_forbidden": "unknown key",
    "tuple_type": "expected a list",
    "model_type": "expected a mapping",
    "string_type": "expected a string",
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Rule(_Frozen):
    """One rule: where and to which tool it applies, its decision, and when."""

    name: str
    scope: str
    tool: str
    decision: Decision
    when: Condition | None = None

    @field_validator("name", "tool")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("scope")
    @classmethod
    def _scope_shape(cls, scope: str) -> str:
        """``tenant/environment`` with an optional ``/agent``, no segment empty."""
        segments = scope.split("/")
        if not 2 <= len(segments) <= 3 or not all(segments):
            raise ValueError(f"{scope!r} is not tenant/environment or tenant/environment/agent")
        return scope

    @property
    def scope_segments(self) -> tuple[str, str, str]:
        """Tenant, environment and agent patterns; an unbound agent matches any."""
        tenant, environment, *agent = self.scope.split("/")
        return tenant, environment, agent[0] if agent else "*"


class RuleSet(_Frozen):
    """The rules of one agent and the decision when none of them applies."""

    default_decision: Decision = "ask"
    rules: tuple[Rule, ...] = ()

    @field_validator("rules")
    @classmethod
    def _unique_names(cls, rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
        """Reasons name the rule that matched, so a name must identify one rule."""
        first: dict[str, int] = {}
        for index, rule in enumerate(rules):
            if rule.name in first:
                raise PydanticCustomError(
                    "duplicate_rule_name",
                    "duplicate rule name; rules[{first}] already uses it",
                    {"index": index, "first": first[rule.name]},
                )
            first[rule.name] = index
        return rules


def load_rules(path: Path, agent: str) -> RuleSet:
    """The rule set in an ``actauth.yml``, with two-segment scopes bound to ``agent``.

    Raises:
        ConfigError: the file is missing, is not YAML, or breaks the format; the
            error names the file, the rule (index and name) and the field.
        UsageError: ``agent`` is not a single scope segment.
    """
    _check_agent(agent)
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(file, "", "file not found") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(file, "", "not UTF-8 text") from exc
    except OSError as exc:
        raise ConfigError(file, "", f"cannot read the file: {exc.strerror}") from exc
    try:
        raw = _parse_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(file, "", f"invalid YAML: {_describe_yaml_error(exc)}") from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(file, "", "expected a mapping with default_decision and rules")
    return rules_from(raw, file, agent)


def rules_from(raw: Mapping[str, Any], file: str, agent: str) -> RuleSet:
    """The rule set ``raw`` (``default_decision`` and ``rules``, as parsed from YAML),
    with two-segment scopes bound to ``agent``; errors name ``file``.

    Also loopengine's inline form (``agent.yaml``'s ``rules`` + ``defaultDecision``).

    Raises:
        ConfigError: ``raw`` breaks the format, naming the rule (index and name) and field.
        UsageError: ``agent`` is not a single scope segment.
    """
    _check_agent(agent)
    try:
        ruleset = RuleSet.model_validate(raw)
    except ValidationError as exc:
        raise _config_error(file, raw, exc) from exc
    bound = tuple(
        rule.model_copy(update={"scope": f"{rule.scope}/{agent}"})
        if rule.scope.count("/") == 1
        else rule
        for rule in ruleset.rules
    )
    return ruleset.model_copy(update={"rules": bound})


def _check_agent(agent: str) -> None:
    if not agent or "/" in agent:
        raise UsageError(f"agent name {agent!r} cannot be a scope segment")


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key repeated in one mapping."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    # PyYAML keeps the last of two equal keys; in a gate file that silently
    # turns `decision: deny` into whatever follows it.
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping
)


def _parse_yaml(text: str) -> Any:
    loader = _UniqueKeyLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _describe_yaml_error(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"{exc.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(exc)


def _config_error(file: str, raw: Mapping[str, Any], exc: ValidationError) -> ConfigError:
    """The first validation error as a ConfigError naming the rule and the field."""
    errors = exc.errors(include_url=False)
    error = errors[0]
    loc = error["loc"]
    if error["type"] == "duplicate_rule_name":
        loc = ("rules", error["ctx"]["index"], "name")
    problem = _problem(error)
    if len(errors) > 1:
        problem += f" (and {len(errors) - 1} more)"
    return ConfigError(file, _field_path(loc, raw), problem)


def _problem(error: ErrorDetails) -> str:
    if error["type"] in _PROBLEMS:
        return _PROBLEMS[error["type"]]
    if error["type"] == "literal_error":
        return f"{error['msg'].replace('Input should be', 'expected')}, got {error['input']!r}"
    return error["msg"].removeprefix("Value error, ")


def _field_path(loc: tuple[int | str, ...], raw: Mapping[str, Any]) -> str:
    """``('rules', 2, 'decision')`` as ``rules[2] 'refund-prod'.decision``."""
    path = ""
    for depth, part in enumerate(loc):
        if isinstance(part, int):
            path += f"[{part}]"
            if depth == 1 and loc[0] == "rules":
                path += _rule_label(raw.get("rules"), part)
        else:
            path += f".{part}" if path else part
    return path


def _rule_label(rules: Any, index: int) -> str:
    """`` 'name'`` for a rule that has a usable name, else nothing."""
    if isinstance(rules, list) and index < len(rules) and isinstance(rules[index], Mapping):
        name = rules[index].get("name")
        if isinstance(name, str) and name.strip():
            return f" {name!r}"
    return ""
