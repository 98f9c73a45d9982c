"""``when`` conditions on a tool call's arguments, and their safe evaluator.

A condition is a leaf ``{field, op, value}`` or a group ``{all: [...]}`` /
``{any: [...]}``; a bare list means ``all`` (signoff's; actauth has no list form).
Evaluation follows actauth 0.0.4 exactly — the reference loopengine users' rules
were written against: a dotted ``field`` walks mappings, a field that is missing or
``null`` makes the leaf false, ``value`` defaults to ``null``, the operator is
Python's own (so ``true == 1`` and ``'a' in 'cat'``), and a comparison that raises
``TypeError`` is false. Evaluation walks plain data and never calls ``eval``.
"""

import operator
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["OPS", "Condition", "Op", "holds"]

Op = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "contains"]

# The fixed operator table (actauth's): a rule can say "field compared with value"
# and nothing else.
OPS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
    "in": lambda actual, expected: actual in expected,
    "contains": lambda actual, expected: expected in actual,
}

LEAF_KEYS = ("field", "op", "value")
GROUP_KEYS = ("all", "any")


class Condition(BaseModel):
    """A leaf test on one argument, or an ``all`` / ``any`` group of conditions.

    A ``None`` member of a group always holds (actauth treats a null condition as
    "no condition"). Keys other than the ones below are ignored, as actauth does;
    ``signoff check`` warns about them.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, extra="ignore", populate_by_name=True)

    field: str | None = None
    op: Op | None = None
    value: Any = None
    all_: "tuple[Condition | None, ...] | None" = Field(default=None, alias="all")
    any_: "tuple[Condition | None, ...] | None" = Field(default=None, alias="any")

    @model_validator(mode="before")
    @classmethod
    def _one_shape(cls, data: Any) -> Any:
        """A list means ``all``; refuse what actauth would read differently than it looks."""
        if isinstance(data, list):
            return {"all": data}
        if not isinstance(data, Mapping):
            return data  # pydantic reports "expected a mapping"
        # actauth looks for `all` first, then `any`, then a leaf, and silently
        # ignores whatever else the mapping holds: a mapping with two of these
        # reads as both, but only one of them would decide.
        present = [key for key in (*GROUP_KEYS, "field", "op", "value") if key in data]
        if present and present[0] in GROUP_KEYS and len(present) > 1:
            ignored = ", ".join(present[1:])
            raise ValueError(
                f"a condition is one of {{field, op, value}}, {{all: [...]}}, {{any: [...]}}; "
                f"actauth would evaluate only its {present[0]!r} group and ignore {ignored}"
            )
        if not present or present[0] not in GROUP_KEYS:
            missing = [key for key in ("field", "op") if data.get(key) is None]
            if missing:
                # actauth raises ConditionError on the first call that reaches it.
                raise ValueError(
                    f"a condition needs a field and an op; missing {' and '.join(missing)}"
                )
        return data


def holds(condition: Condition | None, args: Mapping[str, Any]) -> bool:
    """Whether ``condition`` is true of a tool call's arguments (``None`` always is)."""
    if condition is None:
        return True
    if condition.all_ is not None:
        return all(holds(part, args) for part in condition.all_)
    if condition.any_ is not None:
        return any(holds(part, args) for part in condition.any_)
    if condition.field is None or condition.op is None:
        return False  # unreachable: the validator requires both
    actual = _lookup(args, condition.field)
    # A missing field, or a null one, proves nothing about the call.
    if actual is None:
        return False
    try:
        return bool(OPS[condition.op](actual, condition.value))
    except TypeError:
        # Values of incomparable types (a string and a number, an unhashable key)
        # never satisfy a condition.
        return False


def _lookup(args: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path, or ``None`` when a step is missing or not a mapping."""
    current: Any = args
    for key in path.split("."):
        if not isinstance(current, Mapping) or key not in current:
            return None
        current = current[key]
    return current
