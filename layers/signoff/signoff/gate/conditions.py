"""``when`` conditions on a tool call's arguments, and their safe evaluator.

A condition is a leaf ``{field, op, value}`` or a group ``{all: [...]}`` /
``{any: [...]}``; a bare list means ``all``. Evaluation walks plain data and never
calls ``eval``: a missing field makes a leaf false and values of incomparable types
never compare, so :func:`holds` does not raise on any JSON-like arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

__all__ = ["Condition", "Op", "holds"]

Op = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "contains"]

_LEAF_KEYS = frozenset({"field", "op", "value"})
_GROUP_KEYS = frozenset({"all", "any"})
_ORDERING = frozenset({"gt", "gte", "lt", "lte"})


class Condition(BaseModel):
    """A leaf test on one argument, or an ``all`` / ``any`` group of conditions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str | None = None
    op: Op | None = None
    value: Any = None
    all_: tuple[Condition, ...] | None = Field(default=None, alias="all")
    any_: tuple[Condition, ...] | None = Field(default=None, alias="any")

    @model_validator(mode="before")
    @classmethod
    def _one_shape(cls, data: Any) -> Any:
        """A list means ``all``; a mapping is exactly one of leaf, ``all`` or ``any``."""
        if isinstance(data, list):
            data = {"all": data}
        if not isinstance(data, Mapping):
            return data
        keys = set(data)
        if unknown := keys - _LEAF_KEYS - _GROUP_KEYS:
            # Reported here because the shape errors below would hide a misspelt key.
            raise ValueError(f"unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        groups = keys & _GROUP_KEYS
        leaf = keys & _LEAF_KEYS
        if len(groups) + bool(leaf) != 1:
            raise ValueError("a condition is one of {field, op, value}, {all: [...]}, {any: [...]}")
        if leaf and (missing := _LEAF_KEYS - leaf):
            raise ValueError(f"a condition needs field, op and value; missing {sorted(missing)}")
        for group in groups:
            if data[group] in ([], ()):
                raise ValueError(f"an {group!r} group needs at least one condition")
        return data

    @model_validator(mode="after")
    def _leaf_complete(self) -> Condition:
        """A leaf names a field and an operator (``null`` is neither)."""
        if self.all_ is None and self.any_ is None and (self.field is None or self.op is None):
            raise ValueError("a condition needs a field and an op")
        return self

    @field_validator("field")
    @classmethod
    def _dotted_path(cls, field: str | None) -> str | None:
        """Field paths are dot-separated keys, none of them empty."""
        if field is not None and not all(field.split(".")):
            raise ValueError(f"{field!r} is not a dotted path like 'customer.tier'")
        return field

    @field_validator("value")
    @classmethod
    def _value_fits_op(cls, value: Any, info: ValidationInfo) -> Any:
        """Catch at load time the values an operator could never match."""
        op = info.data.get("op")
        if op == "in" and not isinstance(value, list):
            raise ValueError("op 'in' needs a list value")
        if op in _ORDERING and not (_is_number(value) or isinstance(value, str)):
            raise ValueError(f"op {op!r} needs a number or a string value")
        return value


def holds(condition: Condition, args: Mapping[str, Any]) -> bool:
    """Whether ``condition`` is true of a tool call's arguments."""
    if condition.all_ is not None:
        return all(holds(part, args) for part in condition.all_)
    if condition.any_ is not None:
        return any(holds(part, args) for part in condition.any_)
    if condition.field is None or condition.op is None:
        return False
    found, actual = _lookup(args, condition.field)
    return found and _test(condition.op, actual, condition.value)


def _lookup(args: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """The value at a dotted path, and whether it was there at all."""
    current: Any = args
    for key in path.split("."):
        if not isinstance(current, Mapping) or key not in current:
            return False, None
        current = current[key]
    return True, current


def _test(op: Op, actual: Any, expected: Any) -> bool:
    """One operator applied to an argument value and the rule's value."""
    if op == "eq":
        return _same(actual, expected)
    if op == "ne":
        return not _same(actual, expected)
    if op == "in":
        return isinstance(expected, list) and any(_same(actual, item) for item in expected)
    if op == "contains":
        if isinstance(actual, str):
            return isinstance(expected, str) and expected in actual
        if isinstance(actual, list):
            return any(_same(item, expected) for item in actual)
        return False
    if not _comparable(actual, expected):
        return False
    if op == "gt":
        return bool(actual > expected)
    if op == "gte":
        return bool(actual >= expected)
    if op == "lt":
        return bool(actual < expected)
    return bool(actual <= expected)


def _same(left: Any, right: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, though ``1`` is ``1.0``."""
    if isinstance(left, bool) != isinstance(right, bool):
        return False
    return bool(left == right)


def _comparable(left: Any, right: Any) -> bool:
    """Only two numbers or two strings are ordered; anything else is not comparable."""
    return (_is_number(left) and _is_number(right)) or (
        isinstance(left, str) and isinstance(right, str)
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
