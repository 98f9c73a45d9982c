"""The gate: which tool calls run, wait for a human, or are refused.

Rules come from an agent's ``actauth.yml`` (:func:`load_rules`); :func:`decide` is
a pure function from rules, tool, arguments and scope to a :class:`GateDecision`,
deciding as actauth 0.0.4 (loopengine's rule engine) does; :func:`rule_warnings`
lists what ``signoff check`` reports about a file that loads.

The names below are imported on first use (PEP 562), so a module that needs only
``signoff.gate.policy`` (a pending item's approval policy) loads no rule engine.
No submodule is named like a name re-exported here (``decide`` lives in
``decision``): importing it would set the package's attribute to the module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.plugins import lazy_exports

if TYPE_CHECKING:
    from signoff.gate.conditions import Condition, Op, holds
    from signoff.gate.decision import GateDecision, Scope, decide
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

_HOMES = {
    "Condition": "conditions",
    "Op": "conditions",
    "holds": "conditions",
    "GateDecision": "decision",
    "Scope": "decision",
    "decide": "decision",
    "rule_warnings": "lint",
    "Decision": "rules",
    "Rule": "rules",
    "RuleSet": "rules",
    "load_rules": "rules",
    "read_rules_file": "rules",
    "rules_from": "rules",
}


__getattr__ = lazy_exports(__name__, _HOMES)
