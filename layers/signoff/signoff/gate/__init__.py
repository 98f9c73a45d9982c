"""The gate: which tool calls run, wait for a human, or are refused.

Rules come from an agent's ``actauth.yml`` (:func:`load_rules`); :func:`decide` is
a pure function from rules, tool, arguments and scope to a :class:`GateDecision`.
"""

from __future__ import annotations

from signoff.gate.conditions import Condition, Op, holds
from signoff.gate.decide import GateDecision, Scope, decide
from signoff.gate.rules import Decision, Rule, RuleSet, load_rules, rules_from

__all__ = [
    "Condition",
    "Decision",
    "GateDecision",
    "Op",
    "Rule",
    "RuleSet",
    "Scope",
    "decide",
    "holds",
    "load_rules",
    "rules_from",
]
