"""Checks ``client.converse`` keyword arguments against bedrock-runtime's service model.

botocore's ``ParamValidator`` (which the Stubber runs) checks types, required
members, unknown members, tagged unions and *minimum* lengths and values. The
service model says more that the service enforces and botocore leaves to it:
maximum lengths and values, string patterns (a tool name is ``[a-zA-Z0-9_-]+``,
at most 64 characters; AWS matches a pattern against the whole value) and
enums (roles, a tool result's status). :func:`converse_problems` checks all of
them, and Converse's conversation rules (``tests/support/conversation_rules.py``)
on top.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

import botocore.session
from botocore.validate import ParamValidator

from tests.support.conversation_rules import converse_violations

if TYPE_CHECKING:
    from botocore.model import Shape

__all__ = ["constraint_problems", "converse_input", "converse_problems"]


@functools.cache
def converse_input() -> Shape:
    """The input shape of bedrock-runtime's ``Converse`` operation, as botocore ships it."""
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return model.operation_model("Converse").input_shape


def converse_problems(params: dict[str, Any]) -> list[str]:
    """Every way ``params`` breaks Converse: botocore's checks, the constraints, the rules."""
    report = ParamValidator().validate(params, converse_input())
    problems = report.generate_report().splitlines() if report.has_errors() else []
    problems += constraint_problems(params, converse_input())
    problems += converse_violations(params)
    return problems


def constraint_problems(value: Any, shape: Shape, where: str = "") -> list[str]:
    """The max / pattern / enum constraints of ``shape`` that ``value`` breaks.

    Types, required members and minimums are botocore's to report; a value of the
    wrong type is skipped here.
    """
    if shape.type_name == "structure" and isinstance(value, dict):
        if shape.is_document_type:
            return []
        problems: list[str] = []
        for name, item in value.items():
            if name in shape.members:
                problems += constraint_problems(item, shape.members[name], f"{where}.{name}")
        return problems
    if shape.type_name == "list" and isinstance(value, list | tuple):
        problems = _range(len(value), shape, where, "length")
        for index, item in enumerate(value):
            problems += constraint_problems(item, shape.member, f"{where}[{index}]")
        return problems
    if shape.type_name == "map" and isinstance(value, dict):
        problems = _range(len(value), shape, where, "length")
        for key, item in value.items():
            problems += constraint_problems(key, shape.key, f"{where} key {key!r}")
            problems += constraint_problems(item, shape.value, f"{where}[{key!r}]")
        return problems
    if shape.type_name == "string" and isinstance(value, str):
        problems = _range(len(value), shape, where, "length")
        enum = getattr(shape, "enum", None) or []
        if enum and value not in enum:
            problems.append(f"{where}: {value!r} is not one of {enum}")
        pattern = shape.metadata.get("pattern")
        if pattern and not re.fullmatch(pattern, value):
            problems.append(f"{where}: {value!r} does not match {pattern!r}")
        return problems
    if shape.type_name in ("integer", "long", "float", "double") and isinstance(value, int | float):
        return _range(value, shape, where, "value")
    return []


def _range(measure: float, shape: Shape, where: str, what: str) -> list[str]:
    most = shape.metadata.get("max")
    if most is not None and measure > most:
        return [f"{where}: {what} {measure} is over the maximum {most}"]
    return []
