"""The gate: which tool calls run, wait for a human, or are refused.

Rules come from an agent's ``actauth.yml`` (:func:`load_rules`); :func:`decide` is
a pure function from rules, tool, arguments and scope to a :class:`GateDecision`,
deciding as actauth 0.0.4 (loopengine's rule engine) does; :func:`rule_warnings`
lists what ``signoff check`` reports about a file that loads.
"""

from __future__ import annotations

from signoff.gate.conditions import Condition, Op, holds
from signoff.gate.decide import GateDecision, Scope, decide
from signoff.gate.lint import rule_warnings
from signoff.gate.rules import Decision, Rule, RuleSet, load_rules, read_rules_file, rules_from

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
    "read_rules_file",
    "rule_warnings",
    "rules_from",
]
