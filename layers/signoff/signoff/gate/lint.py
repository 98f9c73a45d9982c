"""Warnings about a rule file that loads: what actauth accepts but signoff would not write.

signoff decides every file actauth 0.0.4 accepts as actauth does, so its stricter
checks cannot refuse such a file; ``signoff check`` reports them instead, each
saying what the file does under both. Input is a mapping that
``signoff.gate.rules_from`` accepted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices

from signoff.gate.conditions import GROUP_KEYS, LEAF_KEYS
from signoff.gate.policy import ApprovalPolicy
from signoff.gate.rules import GLOB_CHARS, POLICY_SOURCES, Rule

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["rule_warnings"]

_TOP_KEYS = ("default_decision", "rules")
_RULE_KEYS = ("name", "scope", "tool", "decision", "when")
_ORDERING = ("gt", "gte", "lt", "lte")


def _file_keys(field: str) -> tuple[str, ...]:
    """The keys a rule file may spell ``Rule``'s ``field`` with."""
    info = Rule.model_fields[field]
    if isinstance(info.validation_alias, AliasChoices):
        return tuple(str(choice) for choice in info.validation_alias.choices)
    return (info.alias or field,)


# signoff's approval policy (signoff.gate.policy): known here, ignored by actauth. The
# keys of the rule's fields an ``ApprovalPolicy`` is read from (``Rule.policy``), so a
# policy field added to the two models is known here too.
_POLICY_KEYS = tuple(
    key
    for field in Rule.model_fields
    if field not in _RULE_KEYS
    and field in {POLICY_SOURCES.get(name, name) for name in ApprovalPolicy.model_fields}
    for key in _file_keys(field)
)


def rule_warnings(raw: Mapping[str, Any]) -> list[str]:
    """One line per finding, ``<where>: <what>``, in file order."""
    found = [f"{key}: unknown key, ignored" for key in _unknown(raw, _TOP_KEYS)]
    first_of: dict[str, int] = {}
    for index, rule in enumerate(raw.get("rules") or ()):
        name = rule.get("name")
        where = f"rules[{index}]" + (f" {name!r}" if name else "")
        if not name:
            found.append(f"{where}: no name; its reason reads matched rule '{rule['scope']}'")
        elif str(name) in first_of:
            found.append(
                f"{where}: rules[{first_of[str(name)]}] has the same name; "
                "reasons cannot tell them apart"
            )
        else:
            first_of[str(name)] = index
        found += [
            f"{where}.{key}: unknown key, ignored"
            for key in _unknown(rule, _RULE_KEYS + _POLICY_KEYS)
        ]
        policy = [key for key in _POLICY_KEYS if key in rule]
        if policy and rule.get("decision") != "ask":
            found.append(
                f"{where}: {', '.join(policy)} apply only to a rule that asks; "
                f"this one decides {rule.get('decision')!r}"
            )
        found += _scope_warnings(where, rule["scope"])
        if GLOB_CHARS & set(rule["tool"]):
            found.append(
                f"{where}.tool: {rule['tool']!r} is a glob, which signoff matches against "
                "tool names; actauth compares tool names literally and would apply this "
                "rule to no tool"
            )
        found += _condition_warnings(f"{where}.when", rule.get("when"))
    return found


def _unknown(mapping: Mapping[str, Any], known: tuple[str, ...]) -> list[str]:
    return [str(key) for key in mapping if key not in known]


def _scope_warnings(where: str, scope: str) -> list[str]:
    segments = scope.split("/")
    if scope == "*" or (len(segments) in (2, 3) and all(segments)):
        return []
    return [
        f"{where}.scope: {scope!r} is not tenant/environment/agent; like actauth, signoff "
        "matches it as one glob against 'tenant/environment/agent'"
    ]


def _condition_warnings(where: str, condition: Any) -> list[str]:
    if condition is None:
        return []
    if isinstance(condition, list):
        listed = f"{where}: a list means 'all' in signoff; actauth needs {{all: [...]}}"
        return [listed, *_members(where, "all", condition)]
    for group in GROUP_KEYS:
        if group in condition:
            found = [
                f"{where}.{key}: unknown key, ignored" for key in _unknown(condition, (group,))
            ]
            if not condition[group]:
                holds = "always holds" if group == "all" else "never holds"
                found.append(f"{where}.{group}: an empty {group!r} group {holds}")
            return found + _members(where, group, condition[group])
    found = [f"{where}.{key}: unknown key, ignored" for key in _unknown(condition, LEAF_KEYS)]
    field, op, value = condition["field"], condition["op"], condition.get("value")
    if not all(field.split(".")):
        found.append(f"{where}.field: {field!r} has an empty segment, looked up as it is")
    if "value" not in condition:
        found.append(f"{where}: no value; it compares with null")
    elif op == "in" and isinstance(value, str):
        found.append(f"{where}.value: op 'in' with a string tests for a substring of {value!r}")
    elif op == "in" and not isinstance(value, list):
        found.append(f"{where}.value: op 'in' with a {type(value).__name__} value")
    elif op in _ORDERING and (isinstance(value, bool) or not isinstance(value, int | float | str)):
        found.append(
            f"{where}.value: op {op!r} with a {type(value).__name__} value compares as "
            "Python does (actauth's semantics), not as a number or a string"
        )
    return found


def _members(where: str, group: str, members: list[Any]) -> list[str]:
    found: list[str] = []
    for index, member in enumerate(members):
        here = f"{where}.{group}[{index}]"
        if member is None:
            found.append(f"{here}: null, which always holds")
        else:
            found += _condition_warnings(here, member)
    return found
