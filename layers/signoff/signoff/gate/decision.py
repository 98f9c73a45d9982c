"""The gate: rules, tool, arguments and scope in; a decision and its reason out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Final

from signoff.errors import UsageError
from signoff.gate.conditions import holds
from signoff.gate.policy import policy_of
from signoff.gate.rules import GLOB_CHARS

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.gate.policy import ApprovalPolicy, EscalationStep
    from signoff.gate.rules import Decision, Rule, RuleSet

__all__ = ["DEFAULT_REASON", "TENANT", "GateDecision", "Scope", "decide"]

# actauth's words when no rule applies.
DEFAULT_REASON = "no rule matched — default"
# What a tenant may be, wherever one is named (an API key, a schedule, a tenant_for hook).
# Anchored for pydantic's ``pattern`` (a search); Python callers use ``fullmatch``.
TENANT: Final = re.compile(r"^[^/\x00-\x1f\x7f]{1,128}$")


@dataclass(frozen=True, kw_only=True)
class Scope:
    """Where a tool call happens: the tenant, its environment and the agent.

    A rule's scope is one glob over ``tenant/environment/agent``: a ``/`` inside a
    segment would move the others (a tenant ``acme/dev`` reads as tenant ``acme`` in
    ``dev``), so a segment holding one is refused here, whatever named it.
    """

    tenant: str
    environment: str
    agent: str

    def __post_init__(self) -> None:
        for part, value in (("tenant", self.tenant), ("environment", self.environment)):
            if "/" in value:
                raise UsageError(f"a {part} is one scope segment, without '/': {value!r}")
        if "/" in self.agent:
            raise UsageError(f"agent name {self.agent!r} cannot be a scope segment")


@dataclass(frozen=True, kw_only=True)
class GateDecision:
    """The gate's answer for one tool call.

    ``rule`` is the matched rule's name, as actauth's ``matched_rule``: ``None`` for
    the default and for a rule without a name (its reason names its scope).
    """

    decision: Decision
    reason: str
    rule: str | None = None
    # The rule itself, for its approval policy (None: the default decided).
    matched: Rule | None = field(default=None, compare=False, repr=False)

    def policy(self, *, agent_ladder: tuple[EscalationStep, ...] = ()) -> ApprovalPolicy | None:
        """The approval policy an ``ask`` of this decision waits under: the matched
        rule's (``Rule.policy``), or for the default the agent's ladder alone; None
        when it is plain. The pause carries it to the item whole (``engine.pauses``)."""
        if self.matched is None:
            return policy_of(agent_ladder=agent_ladder)
        return self.matched.policy(agent_ladder=agent_ladder)


def decide(rules: RuleSet, tool: str, args: Mapping[str, Any], scope: Scope) -> GateDecision:
    """The decision of the first applicable rule in actauth 0.0.4's order, else the default.

    actauth's order: rules with more scope segments that are not exactly ``*`` come
    first (``acme-*`` counts as one), and equally specific rules keep their order in
    the file; whether a rule has a ``when`` plays no part. A rule applies when its
    scope, as one glob, matches ``tenant/environment/agent``, its tool matches and
    its ``when`` holds. signoff's one addition, tool-name globs, ranks a literal tool
    above a glob at the same scope specificity (actauth compares tool names
    literally, so it never applies a glob rule to a real tool).
    """
    key = f"{scope.tenant}/{scope.environment}/{scope.agent}"
    # sorted() is stable, also with reverse=True, so ties keep declaration order.
    for rule in sorted(rules.rules, key=_specificity, reverse=True):
        if _applies(rule, tool, args, key):
            # actauth's reason names the rule, or its scope when it has no name.
            return GateDecision(
                decision=rule.decision,
                reason=f"matched rule '{rule.name or rule.scope}'",
                rule=rule.name,
                matched=rule,
            )
    return GateDecision(decision=rules.default_decision, reason=DEFAULT_REASON)


def _applies(rule: Rule, tool: str, args: Mapping[str, Any], key: str) -> bool:
    """Tool and scope match, and the ``when`` condition (if any) holds."""
    return (
        (rule.tool == tool or (_is_glob(rule.tool) and fnmatchcase(tool, rule.tool)))
        # actauth's fnmatch.fnmatch is fnmatchcase on POSIX (no case folding).
        and fnmatchcase(key, rule.scope)
        and holds(rule.when, args)
    )


def _specificity(rule: Rule) -> tuple[int, int]:
    concrete = sum(1 for segment in rule.scope.split("/") if segment != "*")
    return concrete, int(not _is_glob(rule.tool))


def _is_glob(pattern: str) -> bool:
    return bool(GLOB_CHARS & set(pattern))
