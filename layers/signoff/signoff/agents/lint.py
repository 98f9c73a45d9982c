"""An agent's rules checked against its tools: the typos the gate cannot see.

A rule for ``issue_refnd`` or a ``when`` on ``amout`` loads and decides (actauth
accepts both), but never applies: the call silently falls to the default
decision. Such a rule is an error (``rule_errors``), raised when the agent loads —
so ``signoff check`` (``make build``), a function's cold start and ``signoff dev``
all report it. What can be legitimate is a warning for ``signoff check`` only
(``rule_warnings_for``): a tool glob that matches none of today's tools, a ``when``
field that only some of a glob's tools take, an environment the deployment's
template does not allow.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from signoff.errors import ConfigError
from signoff.gate.rules import GLOB_CHARS

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping

    from signoff.gate.conditions import Condition
    from signoff.gate.rules import Rule
    from signoff.tools import Tool

__all__ = ["rule_errors", "rule_warnings_for"]


def rule_errors(
    file: str, rules: tuple[Rule, ...], tools: Mapping[str, Tool], system: Collection[str]
) -> list[ConfigError]:
    """Each rule naming a tool the agent lacks, or a ``when`` field that tool does not take.

    ``system`` are the engine's own tools (``ask_user``, ``Skill``): a rule may gate
    them, and their arguments are not the agent's to check.
    """
    found: list[ConfigError] = []
    for index, rule in enumerate(rules):
        if GLOB_CHARS & set(rule.tool) or rule.tool in system:
            continue
        where = f"rules[{index}]"
        tool = tools.get(rule.tool)
        if tool is None:
            known = ", ".join(sorted([*tools, *system]))
            found.append(
                ConfigError(
                    file,
                    f"{where}.tool",
                    f"no tool named {rule.tool!r} (this agent has {known}); "
                    "the rule would never apply",
                )
            )
            continue
        takes = set(tool.arguments.model_fields)
        for path, field in _fields(rule.when, f"{where}.when"):
            if field.split(".")[0] not in takes:
                found.append(
                    ConfigError(
                        file,
                        f"{path}.field",
                        f"{rule.tool} has no argument {field.split('.')[0]!r} "
                        f"(it takes {', '.join(sorted(takes)) or 'none'}); "
                        "the condition would never hold",
                    )
                )
    return found


def rule_warnings_for(
    rules: tuple[Rule, ...],
    tools: Mapping[str, Tool],
    environments: Collection[str] | None,
) -> list[str]:
    """``<where>: <what>`` for what may be meant: a tool glob matching no tool, a ``when``
    field some of the glob's tools lack, a literal environment not in ``environments``
    (the template's allowed values; ``None`` when any value may be deployed)."""
    found: list[str] = []
    for index, rule in enumerate(rules):
        where = f"rules[{index}]" + (f" {rule.name!r}" if rule.name else "")
        if GLOB_CHARS & set(rule.tool):
            matched = [t for name, t in tools.items() if fnmatchcase(name, rule.tool)]
            if not matched:
                found.append(f"{where}.tool: {rule.tool!r} matches none of this agent's tools")
            for path, field in _fields(rule.when, f"{where}.when"):
                lacking = sorted(
                    t.name for t in matched if field.split(".")[0] not in t.arguments.model_fields
                )
                if lacking:
                    found.append(
                        f"{path}.field: {', '.join(lacking)} take no argument "
                        f"{field.split('.')[0]!r}; for them the condition never holds"
                    )
        segments = rule.scope.split("/")
        if environments is not None and len(segments) == 3:
            environment = segments[1]
            if not GLOB_CHARS & set(environment) and environment not in environments:
                found.append(
                    f"{where}.scope: environment {environment!r} is none the template allows "
                    f"({', '.join(sorted(environments))}); the rule applies only where it is"
                )
    return found


def _fields(condition: Condition | None, where: str) -> Iterator[tuple[str, str]]:
    """``(where, field)`` of each leaf test in ``condition``."""
    if condition is None:
        return
    for group, members in (("all", condition.all_), ("any", condition.any_)):
        if members is not None:
            for index, member in enumerate(members):
                yield from _fields(member, f"{where}.{group}[{index}]")
            return
    if condition.field is not None:
        yield where, condition.field
