"""An agent's rules checked against its tools: the typos the gate cannot see.

A rule for ``issue_refnd`` or a ``when`` on ``amout`` loads and decides (actauth
accepts both, and signoff loads every file actauth accepts), but never applies:
the call silently falls to the default decision. So it is a warning, never a load
failure, naming the closest tool or argument when one is close. ``rule_warnings_for``
says each ``<where>: <what>``: a tool the agent lacks, a ``when`` field its tool does
not take, a tool glob that matches none of today's tools, a ``when`` field that only
some of a glob's tools take, an environment the deployment's template does not allow.
An agent carries those it has when it loads (``Agent.warnings``): a cold start logs
them, ``signoff dev`` shows them, ``signoff check`` prints them (``--strict`` fails).
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from signoff.gate.rules import GLOB_CHARS

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping

    from signoff.gate.conditions import Condition
    from signoff.gate.policy import EscalationStep
    from signoff.gate.rules import Rule
    from signoff.tools import Tool

__all__ = ["SYSTEM_TOOLS", "ladder_warnings", "rule_warnings_for"]

# The engine's own tools: a rule may gate them, and their arguments are not the
# agent's to check.
SYSTEM_TOOLS = frozenset({"ask_user", "Skill"})


def rule_warnings_for(
    rules: tuple[Rule, ...],
    tools: Mapping[str, Tool],
    environments: Collection[str] | None = None,
    system: Collection[str] = SYSTEM_TOOLS,
) -> list[str]:
    """``<where>: <what>`` for each rule that may not say what was meant, checked against
    the agent's ``tools``, the engine's ``system`` tools and ``environments`` (the
    template's allowed values; ``None`` when any value may be deployed)."""
    found: list[str] = []
    for index, rule in enumerate(rules):
        where = f"rules[{index}]" + (f" {rule.name!r}" if rule.name else "")
        if GLOB_CHARS & set(rule.tool):
            found += _glob_warnings(where, rule, tools)
        elif rule.tool not in system:
            found += _tool_warnings(where, rule, tools, system)
        segments = rule.scope.split("/")
        if environments is not None and len(segments) == 3:
            environment = segments[1]
            if not GLOB_CHARS & set(environment) and environment not in environments:
                found.append(
                    f"{where}.scope: environment {environment!r} is none the template allows "
                    f"({', '.join(sorted(environments))}); the rule applies only where it is"
                )
    return found


def ladder_warnings(
    rules: tuple[Rule, ...], agent_ladder: tuple[EscalationStep, ...], approval_timeout: float
) -> list[str]:
    """``<where>: <what>`` for each escalation step that comes at or after the agent's
    ``approvalTimeout``: the item expires first (the sweeper expires it before it
    climbs), so the step is never reached."""
    found: list[str] = []
    ladders = [("escalate", agent_ladder)] + [
        (f"rules[{index}]" + (f" {rule.name!r}" if rule.name else "") + ".escalate", rule.escalate)
        for index, rule in enumerate(rules)
        if rule.escalate
    ]
    for where, ladder in ladders:
        late = [n for n, step in enumerate(ladder, start=1) if step.after >= approval_timeout]
        if late:
            found.append(
                f"{where}: step {late[0]} (after {_span(ladder[late[0] - 1].after)}) comes "
                f"after approvalTimeout ({_span(approval_timeout)}): the item expires "
                "first, so it is never reached"
            )
    return found


def _span(seconds: float) -> str:
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _tool_warnings(
    where: str, rule: Rule, tools: Mapping[str, Tool], system: Collection[str]
) -> list[str]:
    """A literal tool the agent lacks, or a ``when`` field the tool does not take."""
    tool = tools.get(rule.tool)
    if tool is None:
        known = sorted([*tools, *system])
        return [
            f"{where}.tool: no tool named {rule.tool!r}; the rule never applies"
            f"{_meant(rule.tool, known)} (this agent has {', '.join(known)})"
        ]
    takes = sorted(tool.arguments.model_fields)
    found = []
    for path, field in _fields(rule.when, f"{where}.when"):
        argument = field.split(".")[0]
        if argument not in takes:
            found.append(
                f"{path}.field: {rule.tool} has no argument {argument!r}; the condition "
                f"never holds, so the rule never applies{_meant(argument, takes)} "
                f"(it takes {', '.join(takes) or 'none'})"
            )
    return found


def _glob_warnings(where: str, rule: Rule, tools: Mapping[str, Tool]) -> list[str]:
    """A glob matching none of the agent's tools, or a ``when`` field some of them lack."""
    matched = [t for name, t in tools.items() if fnmatchcase(name, rule.tool)]
    found = []
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
    return found


def _meant(name: str, known: list[str]) -> str:
    """``; did you mean 'x'?`` when one of ``known`` is close to ``name``."""
    from difflib import get_close_matches  # only a rule naming an unknown tool needs it

    close = get_close_matches(name, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


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
