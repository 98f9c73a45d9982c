"""The gate: rules, tool, arguments and scope in; a decision and its reason out."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from signoff.gate.conditions import holds

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.gate.rules import Decision, Rule, RuleSet

__all__ = ["GateDecision", "Scope", "decide"]

_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, kw_only=True)
class Scope:
    """Where a tool call happens: the tenant, its environment and the agent."""

    tenant: str
    environment: str
    agent: str


@dataclass(frozen=True, kw_only=True)
class GateDecision:
    """The gate's answer for one tool call; ``rule`` is ``None`` for the default."""

    decision: Decision
    reason: str
    rule: str | None = None


def decide(rules: RuleSet, tool: str, args: Mapping[str, Any], scope: Scope) -> GateDecision:
    """The decision of the most specific rule that applies, else the default.

    Specificity ranks literal scope segments first, then a literal tool name over a
    glob, then a rule with ``when`` over one without; ties go to the earlier rule.
    """
    target = (scope.tenant, scope.environment, scope.agent)
    best: Rule | None = None
    best_rank = (-1, -1, -1)
    for rule in rules.rules:
        rank = _specificity(rule)
        # Strictly greater, so the earlier of two equally specific rules wins.
        if rank > best_rank and _applies(rule, tool, args, target):
            best, best_rank = rule, rank
    if best is None:
        return GateDecision(
            decision=rules.default_decision,
            reason=f"no rule matched; default decision '{rules.default_decision}'",
        )
    return GateDecision(
        decision=best.decision, reason=f"matched rule '{best.name}'", rule=best.name
    )


def _applies(rule: Rule, tool: str, args: Mapping[str, Any], target: tuple[str, str, str]) -> bool:
    """Scope and tool match, and the ``when`` condition (if any) holds."""
    return (
        all(map(fnmatchcase, target, rule.scope_segments))
        and fnmatchcase(tool, rule.tool)
        and (rule.when is None or holds(rule.when, args))
    )


def _specificity(rule: Rule) -> tuple[int, int, int]:
    literal_segments = sum(1 for segment in rule.scope_segments if _is_literal(segment))
    return literal_segments, int(_is_literal(rule.tool)), int(rule.when is not None)


def _is_literal(pattern: str) -> bool:
    return not _GLOB_CHARS & set(pattern)
