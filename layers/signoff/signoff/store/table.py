"""The one storage primitive the store ports are written over: a table of item dicts.

``Table`` offers what DynamoDB offers — get, conditional put, conditional
update, query by key range (on the table or a sparse index), and a transaction
of conditional writes — and nothing more. ``MemoryTable`` (``memory.py``) and
``DynamoTable`` (``dynamodb/table.py``) implement it and refuse a write the
same way: ``ConditionFailed`` with the item the condition saw.

A condition is a value: it renders to a DynamoDB expression and evaluates in
Python against an item with DynamoDB's semantics (a missing attribute compares
false, values of different types never match). So each state rule is written
once (``rules.py``) and both tables apply the very same one.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = [
    "Attr",
    "Condition",
    "ConditionFailed",
    "Index",
    "Item",
    "Key",
    "Placeholders",
    "Put",
    "Table",
    "Update",
    "all_of",
    "any_of",
]

Item = dict[str, Any]
Key = tuple[str, str]
Op = Literal["=", "<", "<=", ">", ">="]
_NAME = re.compile(r"^\w+$")


class ConditionFailed(Exception):
    """A conditional write was refused; nothing of its call was written.

    ``item`` is the item the refused condition saw (None: missing), returned by
    the same call (``ReturnValuesOnConditionCheckFailure``); ``write`` is the
    refused write's place in a transaction (0 for a single write).
    """

    def __init__(self, item: Item | None, *, write: int = 0) -> None:
        self.item = item
        self.write = write
        super().__init__(f"the conditional request failed (write {write})")


class Placeholders:
    """The ``#name`` and ``:value`` placeholders one request's expressions use."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def name(self, attribute: str) -> str:
        # Every attribute is written as #name, so reserved words (status, ttl) never clash.
        if not _NAME.match(attribute):
            raise ValueError(f"not an attribute name: {attribute!r}")
        self.names[f"#{attribute}"] = attribute
        return f"#{attribute}"

    def value(self, value: Any) -> str:
        # Numbered as they come: DynamoDB refuses a value the expressions do not use.
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder


def _comparable(left: Any, right: Any) -> bool:
    """Whether DynamoDB compares the two: numbers with numbers, strings with strings."""
    number = (int, float)
    if isinstance(left, bool) or isinstance(right, bool):
        return False
    if isinstance(left, number) and isinstance(right, number):
        return True
    return isinstance(left, str) and isinstance(right, str)


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return _comparable(left, right) and bool(left == right)


class Condition(ABC):
    """A condition on one item: rendered for DynamoDB, evaluated in Python alike."""

    @abstractmethod
    def holds(self, item: Item | None) -> bool:
        """Whether the condition holds for ``item`` (None: no such item)."""

    @abstractmethod
    def render(self, slots: Placeholders) -> str:
        """The condition as a DynamoDB expression, its names and values put in ``slots``."""

    def __and__(self, other: Condition) -> Condition:
        return all_of(self, other)

    def __or__(self, other: Condition) -> Condition:
        return any_of(self, other)


@dataclass(frozen=True)
class _Exists(Condition):
    name: str
    present: bool

    def holds(self, item: Item | None) -> bool:
        return (item is not None and self.name in item) == self.present

    def render(self, slots: Placeholders) -> str:
        function = "attribute_exists" if self.present else "attribute_not_exists"
        return f"{function}({slots.name(self.name)})"


@dataclass(frozen=True)
class _Compare(Condition):
    name: str
    op: Op
    value: Any

    def holds(self, item: Item | None) -> bool:
        if item is None or self.name not in item:
            return False
        left, right = item[self.name], self.value
        if self.op == "=":
            return _equal(left, right)
        if not _comparable(left, right):
            return False
        match self.op:
            case "<":
                return bool(left < right)
            case "<=":
                return bool(left <= right)
            case ">":
                return bool(left > right)
            case _:
                return bool(left >= right)

    def render(self, slots: Placeholders) -> str:
        return f"{slots.name(self.name)} {self.op} {slots.value(self.value)}"


@dataclass(frozen=True)
class _In(Condition):
    name: str
    options: tuple[Any, ...]

    def holds(self, item: Item | None) -> bool:
        if item is None or self.name not in item:
            return False
        return any(_equal(item[self.name], option) for option in self.options)

    def render(self, slots: Placeholders) -> str:
        listed = ", ".join(slots.value(option) for option in self.options)
        return f"{slots.name(self.name)} IN ({listed})"


@dataclass(frozen=True)
class _Between(Condition):
    name: str
    low: str
    high: str

    def holds(self, item: Item | None) -> bool:
        value = None if item is None else item.get(self.name)
        return isinstance(value, str) and self.low <= value <= self.high

    def render(self, slots: Placeholders) -> str:
        low, high = slots.value(self.low), slots.value(self.high)
        return f"{slots.name(self.name)} BETWEEN {low} AND {high}"


@dataclass(frozen=True)
class _BeginsWith(Condition):
    name: str
    prefix: str

    def holds(self, item: Item | None) -> bool:
        value = None if item is None else item.get(self.name)
        return isinstance(value, str) and value.startswith(self.prefix)

    def render(self, slots: Placeholders) -> str:
        return f"begins_with({slots.name(self.name)}, {slots.value(self.prefix)})"


@dataclass(frozen=True)
class _All(Condition):
    parts: tuple[Condition, ...]

    def holds(self, item: Item | None) -> bool:
        return all(part.holds(item) for part in self.parts)

    def render(self, slots: Placeholders) -> str:
        return " AND ".join(f"({part.render(slots)})" for part in self.parts)


@dataclass(frozen=True)
class _Any(Condition):
    parts: tuple[Condition, ...]

    def holds(self, item: Item | None) -> bool:
        return any(part.holds(item) for part in self.parts)

    def render(self, slots: Placeholders) -> str:
        return " OR ".join(f"({part.render(slots)})" for part in self.parts)


def all_of(*parts: Condition) -> Condition:
    """The conjunction of ``parts`` (nested conjunctions flattened into one)."""
    return _All(
        tuple(p for part in parts for p in (part.parts if isinstance(part, _All) else [part]))
    )


def any_of(*parts: Condition) -> Condition:
    """The disjunction of ``parts`` (nested disjunctions flattened into one)."""
    return _Any(
        tuple(p for part in parts for p in (part.parts if isinstance(part, _Any) else [part]))
    )


@dataclass(frozen=True)
class Attr:
    """One attribute of an item, to build conditions on."""

    name: str

    def exists(self) -> Condition:
        return _Exists(self.name, present=True)

    def missing(self) -> Condition:
        return _Exists(self.name, present=False)

    def eq(self, value: Any) -> Condition:
        return _Compare(self.name, "=", value)

    def lt(self, value: Any) -> Condition:
        return _Compare(self.name, "<", value)

    def le(self, value: Any) -> Condition:
        return _Compare(self.name, "<=", value)

    def gt(self, value: Any) -> Condition:
        return _Compare(self.name, ">", value)

    def one_of(self, *options: Any) -> Condition:
        return _In(self.name, options)

    def between(self, low: str, high: str) -> Condition:
        return _Between(self.name, low, high)

    def begins_with(self, prefix: str) -> Condition:
        return _BeginsWith(self.name, prefix)


@dataclass(frozen=True)
class Index:
    """A key a table is queried by: its own (``name`` None) or a sparse index's."""

    name: str | None
    pk: str
    sk: str


@dataclass(frozen=True)
class Put:
    """Write a whole item, if ``condition`` holds for the item it replaces."""

    item: Item
    condition: Condition | None = None


@dataclass(frozen=True)
class Update:
    """Set and remove attributes of the item under ``key``, if ``condition`` holds for it."""

    key: Key
    set_attrs: Item = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    condition: Condition | None = None

    def apply(self, item: Item | None) -> Item:
        """The item as this update leaves it (a missing one is created, as DynamoDB does)."""
        after = {"pk": self.key[0], "sk": self.key[1]} if item is None else dict(item)
        after.update(self.set_attrs)
        for name in self.remove:
            after.pop(name, None)
        return after


class Table(Protocol):
    """DynamoDB's primitives over item dicts (plain Python values; numbers int or float)."""

    page_size: int

    def get(self, key: Key) -> Item | None:
        """The stored item (strongly consistent), even past its ttl."""

    def put(self, item: Item, *, condition: Condition | None = None) -> None:
        """Write a whole item.

        Raises:
            ConditionFailed: ``condition`` did not hold; nothing was written.
        """

    def update(self, update: Update) -> Item:
        """Apply ``update``; the item as it is afterwards.

        Raises:
            ConditionFailed: its condition did not hold; nothing was written.
        """

    def query(
        self,
        partition: str,
        sort: Condition | None = None,
        *,
        index: Index,
        limit: int | None = None,
        descending: bool = False,
    ) -> Iterator[list[Item]]:
        """Items of one partition of ``index`` whose sort key meets ``sort``, page by page.

        Pages hold at most ``limit`` (else ``page_size``) items, in sort-key order,
        and are fetched as the caller iterates (``descending``: last sort key
        first). Items past their ttl are included, as DynamoDB deletes them lazily.
        """

    def transact(self, writes: Sequence[Put | Update]) -> None:
        """Apply every write, or none of them.

        Raises:
            ConditionFailed: the condition of write number ``write`` did not hold.
        """

    def scan(self, keep: Condition | None = None) -> Iterator[list[Item]]:
        """Every item of the table (no index) that meets ``keep``, page by page.

        A read of the whole table (DynamoDB's Scan, ``keep`` its filter), so only
        offline tools and tests use it (``bench``'s metering, dumps of a table), never
        a request.
        Items past their ttl are included, as in ``query``.
        """
