"""Checks a rendered request against a vendor SDK's own ``TypedDict`` request type.

pydantic validates the value against the type (fields, their types, literals,
required keys); it ignores unknown keys in a ``TypedDict`` and validates
``Iterable`` fields lazily, so :func:`sdk_problems` also drains those iterators
and walks the value itself for keys the type does not declare. The SDKs are
test-only references (the ``dev`` extra): nothing in the engine imports them.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import TypeAdapter, ValidationError
from typing_extensions import is_typeddict

__all__ = ["sdk_problems"]

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def sdk_problems(value: Any, request_type: Any) -> list[str]:
    """Every way ``value`` breaks ``request_type``; empty when it is a valid request."""
    adapter = _ADAPTERS.get(request_type)
    if adapter is None:
        adapter = _ADAPTERS[request_type] = TypeAdapter(request_type)
    problems: list[str] = []
    try:
        problems += _drain(adapter.validate_python(value, strict=True), "")
    except ValidationError as exc:
        problems += _messages(exc, "")
    problems.extend(_unknown_keys(value, request_type, "$"))
    return problems


def _drain(value: Any, where: str) -> list[str]:
    """Consumes pydantic's lazy iterators, so their items are validated too."""
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _drain(item, f"{where}.{key}")]
    if isinstance(value, list | tuple):
        return [p for i, item in enumerate(value) for p in _drain(item, f"{where}[{i}]")]
    if isinstance(value, collections.abc.Iterator):
        problems: list[str] = []
        index = 0
        while True:
            try:
                item = next(value)
            except StopIteration:
                return problems
            except ValidationError as exc:  # the item at ``index`` is invalid
                problems += _messages(exc, where)
            else:
                problems += _drain(item, f"{where}[{index}]")
            index += 1
    return []


def _messages(exc: ValidationError, where: str) -> list[str]:
    return [
        f"{where}.{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
        for error in exc.errors(include_url=False)
    ]


def _unknown_keys(value: Any, tp: Any, where: str) -> list[str]:
    tp = _unwrap(tp)
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [_unwrap(arg) for arg in get_args(tp)]
        candidates = [o for o in options if _could_be(value, o)]
        if not candidates:
            return []  # pydantic reports a value no member accepts
        found = [_unknown_keys(value, option, where) for option in candidates]
        return min(found, key=len)
    if is_typeddict(tp) and isinstance(value, dict):
        hints = typing.get_type_hints(tp, include_extras=True)
        problems = [
            f"{where}.{key}: not a field of {tp.__name__}" for key in value if key not in hints
        ]
        for key, item in value.items():
            if key in hints:
                problems.extend(_unknown_keys(item, hints[key], f"{where}.{key}"))
        return problems
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence) and isinstance(
        value, list
    ):
        (item_type,) = get_args(tp) or (Any,)
        problems = []
        for index, item in enumerate(value):
            problems.extend(_unknown_keys(item, item_type, f"{where}[{index}]"))
        return problems
    return []


def _could_be(value: Any, tp: Any) -> bool:
    """Whether ``value`` may be an instance of the union member ``tp``: its kind and tags match."""
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return False
        hints = typing.get_type_hints(tp, include_extras=True)
        for key, hint in hints.items():
            allowed = _unwrap(hint)
            if (
                get_origin(allowed) is Literal
                and key in value
                and value[key] not in get_args(allowed)
            ):
                return False
        return True
    origin = get_origin(tp) or tp
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence):
        return isinstance(value, list)
    if origin is Literal:
        return value in get_args(tp)
    return isinstance(origin, type) and isinstance(value, origin)


def _unwrap(tp: Any) -> Any:
    """``tp`` without ``Required`` / ``NotRequired`` / ``Annotated`` / ``Optional``'s None."""
    while get_origin(tp) in (typing.Annotated, typing.Required, typing.NotRequired) or (
        getattr(tp, "__origin__", None) is not None
        and str(get_origin(tp)).endswith(("Required", "NotRequired"))
    ):
        tp = get_args(tp)[0]
    return tp
