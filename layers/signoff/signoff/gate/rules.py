"""An agent's gate rules, in loopengine's ``actauth.yml`` format, and their loader.

::

    default_decision: deny            # allow | ask | deny; absent means ask
    rules:
      - name: refund-production-needs-approval     # optional
        scope: "*/production/*"       # a glob over tenant/environment/agent
        tool: issue_refund            # a tool name (or a glob: signoff's own)
        decision: ask
        when: {field: amount, op: gt, value: 100}

Every file actauth 0.0.4 accepts loads and decides as actauth decides it (see
``signoff.gate.decision``): rules without a name, duplicate names, keys actauth
ignores. Stricter checks are warnings from ``signoff check``
(``signoff.gate.lint``). A file is refused only when actauth could not use it
(it would raise) or when it reads one way and actauth would decide another: a
YAML key given twice, a condition with both a group and other tests, and a
two-segment ``tenant/environment`` scope whose glob actauth would stretch over the
agent segment (``*/production`` applies, in actauth, only to an agent named
``production``).
"""

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from signoff import yamldocs
from signoff.errors import ConfigError, UsageError
from signoff.gate.conditions import Condition
from signoff.gate.policy import ApprovalPolicy, EscalationStep, Names, check_ladder, fixed

if TYPE_CHECKING:
    from pathlib import Path

    import yaml
    from pydantic_core import ErrorDetails

__all__ = [
    "GLOB_CHARS",
    "POLICY_SOURCES",
    "Decision",
    "Rule",
    "RuleSet",
    "describe_yaml_error",
    "load_rules",
    "rules_from",
]

Decision = Literal["allow", "ask", "deny"]

# What makes fnmatch treat a pattern as more than a literal.
GLOB_CHARS = frozenset("*?[")

_PROBLEMS = {
    "missing": "required",
    "tuple_type": "expected a list",
    "model_type": "expected a mapping",
    "string_type": "expected a string",
}


class _Frozen(BaseModel):
    # Keys actauth does not know are ignored, as actauth ignores them (a
    # `description` is common); `signoff check` lists them.
    model_config = ConfigDict(defer_build=True, frozen=True, extra="ignore", populate_by_name=True)


# The rule field an ``ApprovalPolicy`` field is read from where their names differ
# (``Rule.policy``): the file's ``from`` holds the approvers, its name the rule's.
POLICY_SOURCES: Final = {"approvers": "from_", "rule": "name"}


class Rule(_Frozen):
    """One rule: where and to which tool it applies, its decision, and when.

    An ``ask`` may carry an approval policy (``signoff.gate.policy``): ``approvals``,
    ``from``, ``denyQuorum`` and ``escalate`` — keys actauth ignores.
    """

    name: str | None = None
    scope: str
    tool: str
    decision: Decision
    when: Condition | None = None
    approvals: int = Field(default=1, ge=1)
    from_: Names = Field(default=(), alias="from")
    deny_quorum: int = Field(
        default=1,
        ge=1,
        validation_alias=AliasChoices("denyQuorum", "deny_quorum"),
        serialization_alias="denyQuorum",
    )
    escalate: tuple[EscalationStep, ...] | None = None

    @model_validator(mode="after")
    def _ladder_in_order(self) -> "Rule":
        if self.escalate is not None:
            check_ladder(self.escalate, may_approve=True)
        return self

    def policy(self, *, agent_ladder: tuple[EscalationStep, ...] = ()) -> ApprovalPolicy | None:
        """The approval policy of an ask by this rule; None when it is plain.

        Every ``ApprovalPolicy`` field is read from this rule's field of the same name
        (``POLICY_SOURCES`` names the others), so a policy field is added to the two
        models and nothing maps it; the ladder is the rule's own, else the agent's.
        """
        settings = {
            name: getattr(self, POLICY_SOURCES.get(name, name))
            for name in ApprovalPolicy.model_fields
        }
        if self.escalate is None:
            settings["escalate"] = agent_ladder
        return fixed(ApprovalPolicy.model_validate(settings))

    @field_validator("name", mode="before")
    @classmethod
    def _number_name(cls, name: Any) -> Any:
        """A numeric name (``name: 2024``) reads as its text, as in actauth's reason."""
        if isinstance(name, int | float) and not isinstance(name, bool):
            return str(name)
        return name

    @field_validator("scope")
    @classmethod
    def _scope_reads_as_actauth_decides(cls, scope: str, info: ValidationInfo) -> str:
        """Refuse a two-segment scope that actauth would not read as tenant/environment."""
        tenant, sep, environment = scope.partition("/")
        if not sep or "/" in environment or _two_segments_agree(tenant, environment):
            return scope
        agent = (info.context or {}).get("agent")
        if not GLOB_CHARS & set(scope):
            effect = "applies to no call (a key has three segments)"
        elif not GLOB_CHARS & set(environment):
            effect = f"applies only to an agent named {environment!r}"
            if agent and agent != environment:
                effect += f", never to {agent!r}"
        else:
            effect = "lets its wildcards run across the '/' between the segments"
        raise ValueError(
            f"{scope!r} reads as tenant/environment, but actauth 0.0.4 matches a scope "
            f"against 'tenant/environment/agent' as one glob, where it {effect}; "
            f"write '{scope}/*' for that tenant and environment under every agent"
        )


def _two_segments_agree(tenant: str, environment: str) -> bool:
    """Whether ``tenant/environment``, as actauth's one glob, matches what it reads as.

    ``T/*`` (``T`` a literal with at most a trailing ``*``) matches a key
    ``tenant/environment/agent`` exactly when the tenant matches ``T``: the final
    ``*`` takes the rest; so does ``T/E*`` for literals ``T`` and ``E``. In any other
    shape the environment pattern has to match the agent, or a wildcard spans a ``/``.
    """
    if environment == "*":
        return not GLOB_CHARS & set(tenant.removesuffix("*"))
    return (
        environment.endswith("*")
        and not GLOB_CHARS & set(tenant)
        and not GLOB_CHARS & set(environment[:-1])
    )


class RuleSet(_Frozen):
    """The rules of one agent, in declaration order, and the decision when none applies."""

    default_decision: Decision = "ask"
    rules: tuple[Rule, ...] = ()


def load_rules(path: "Path", agent: str) -> RuleSet:
    """The rule set in an ``actauth.yml`` of ``agent``.

    Raises:
        ConfigError: the file is missing, is not YAML, or breaks the format; the
            error names the file, the rule (index and name) and the field.
        UsageError: ``agent`` is not a single scope segment.
    """
    _check_agent(agent)
    file = str(path)
    return rules_from(read_rules_file(path), file, agent)


def read_rules_file(path: "Path") -> dict[str, Any]:
    """The mapping in an ``actauth.yml`` (empty for an empty file), not yet validated.

    Raises:
        ConfigError: the file is missing, unreadable, not YAML, or not a mapping.
    """
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
        raw = yamldocs.parse(text, "unique-keys", _parse_yaml)
    except yamldocs.YAMLError as exc:
        raise ConfigError(file, "", f"invalid YAML: {describe_yaml_error(exc)}") from exc
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(file, "", "expected a mapping with default_decision and rules")
    return raw


def rules_from(raw: Mapping[str, Any], file: str, agent: str) -> RuleSet:
    """The rule set ``raw`` (``default_decision`` and ``rules``, as parsed from YAML)
    of ``agent``; errors name ``file``.

    Also loopengine's inline form (``agent.yaml``'s ``rules`` + ``defaultDecision``).

    Raises:
        ConfigError: ``raw`` breaks the format, naming the rule (index and name) and field.
        UsageError: ``agent`` is not a single scope segment.
    """
    _check_agent(agent)
    try:
        return RuleSet.model_validate(raw, context={"agent": agent})
    except ValidationError as exc:
        raise _config_error(file, raw, exc) from exc


def _check_agent(agent: str) -> None:
    if not agent or "/" in agent:
        raise UsageError(f"agent name {agent!r} cannot be a scope segment")


def _parse_yaml(text: str) -> Any:
    loader = _unique_key_loader()(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@cache
def _unique_key_loader() -> "type[yaml.SafeLoader]":
    """A safe loader that refuses a key repeated in one mapping (PyYAML imported here:
    a deployed cold start reads the build's snapshot, ``signoff.yamldocs``)."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        pass

    def construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        # PyYAML (and so actauth) keeps the last of two equal keys; in a gate file
        # that silently turns `decision: deny` into whatever follows it.
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r}; actauth would keep the last one",
                    key_node.start_mark,
                )
            seen.add(key)
        return loader.construct_mapping(node)

    UniqueKeyLoader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_unique_mapping
    )
    return UniqueKeyLoader


def describe_yaml_error(exc: "yaml.YAMLError") -> str:
    """What is wrong and where, on one line: ``<problem> (line N, column M)``."""
    import yaml

    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"{exc.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(exc)


def _config_error(file: str, raw: Mapping[str, Any], exc: ValidationError) -> ConfigError:
    """The first validation error as a ConfigError naming the rule and the field."""
    errors = exc.errors(include_url=False)
    error = errors[0]
    loc = error["loc"]
    problem = _problem(error)
    if len(errors) > 1:
        problem += f" (and {len(errors) - 1} more)"
    return ConfigError(file, _field_path(loc, raw), problem)


def _problem(error: "ErrorDetails") -> str:
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
