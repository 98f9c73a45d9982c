"""The DynamoDB primitives the store ports are built from, and the one error edge.

Every call goes through ``DynamoTable._call``: a failed condition becomes
``ConditionFailed`` (carrying the item as it was, from the same call), a
transaction cancelled by a condition becomes ``TransactionRefused``, and every
other botocore error becomes ``StoreUnavailable``. The port classes turn the
first two into signoff's errors; nothing from botocore leaves this package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError, ClientError

from signoff.errors import StoreUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from mypy_boto3_dynamodb.client import DynamoDBClient

    from signoff.store.codec import Item, Key

__all__ = [
    "Condition",
    "ConditionFailed",
    "DynamoTable",
    "TransactionRefused",
    "all_of",
    "dump",
    "load",
]

T = TypeVar("T")

# Throttling and service faults: the same request may succeed later.
RETRYABLE: Final = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "InternalServerError",
        "RequestLimitExceeded",
        "ServiceUnavailable",
        "TransactionConflictException",
        "TransactionInProgressException",
    }
)
_NAME = re.compile(r"#(\w+)")
_SERIALIZER = TypeSerializer()
_DESERIALIZER = TypeDeserializer()


class ConditionFailed(Exception):
    """A conditional write was refused; ``item`` is the item it saw (None: missing)."""

    def __init__(self, item: Item | None) -> None:
        self.item = item
        super().__init__("the conditional request failed")


class TransactionRefused(Exception):
    """A transaction was cancelled because a condition failed; one code per write.

    ``items`` holds, per write, the item its condition saw when the write asked
    for it (``ReturnValuesOnConditionCheckFailure``), else None.
    """

    def __init__(self, codes: list[str], items: list[Item | None] | None = None) -> None:
        self.codes = codes
        self.items = items or [None] * len(codes)
        super().__init__(f"transaction cancelled: {codes}")


@dataclass(frozen=True, kw_only=True)
class Condition:
    """A condition expression and the values its ``:placeholders`` stand for."""

    expression: str
    values: dict[str, Any] = field(default_factory=dict)


def all_of(*parts: str) -> str:
    """The conjunction of condition parts, each parenthesised."""
    return " AND ".join(f"({part})" for part in parts)


def _names(*expressions: str) -> dict[str, str]:
    # Every attribute is written as #name, so reserved words (status, ttl) never clash.
    return {f"#{name}": name for text in expressions for name in _NAME.findall(text)}


def _to_number(value: Any) -> Any:
    if isinstance(value, float):
        # repr keeps every digit, so the float reads back identical
        return Decimal(repr(value))
    return value


def _from_number(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def dump(item: Item) -> dict[str, Any]:
    """An item dict in DynamoDB's attribute-value form."""
    return {name: _SERIALIZER.serialize(_to_number(value)) for name, value in item.items()}


def load(attributes: dict[str, Any]) -> Item:
    """An item dict from DynamoDB's attribute-value form."""
    return {
        name: _from_number(_DESERIALIZER.deserialize(value)) for name, value in attributes.items()
    }


def _key(key: Key) -> dict[str, Any]:
    return dump({"pk": key[0], "sk": key[1]})


def _expression_args(*expressions: str, values: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"ExpressionAttributeNames": _names(*expressions)}
    if values:
        args["ExpressionAttributeValues"] = dump(values)
    return args


class DynamoTable:
    """One table, reached through a low-level boto3 client."""

    def __init__(
        self, client: DynamoDBClient, name: str, *, now: Callable[[], float], page_size: int
    ) -> None:
        self.name = name
        self.now = now
        self.page_size = page_size
        self._client = client

    def _call(self, operation: Callable[..., T], **kwargs: Any) -> T:
        try:
            return operation(**kwargs)
        except ClientError as exc:
            raise _translate(exc) from exc
        except BotoCoreError as exc:
            raise StoreUnavailable(f"DynamoDB table {self.name} unreachable: {exc}") from exc

    def get(self, key: Key) -> Item | None:
        """The stored item (strongly consistent), even past its ttl."""
        found = self._call(
            self._client.get_item, TableName=self.name, Key=_key(key), ConsistentRead=True
        )
        attributes = found.get("Item")
        return None if attributes is None else load(cast("dict[str, Any]", attributes))

    def put(self, item: Item, *, condition: Condition | None = None) -> None:
        """Write a whole item.

        Raises:
            ConditionFailed: ``condition`` did not hold.
        """
        args: dict[str, Any] = {"TableName": self.name, "Item": dump(item)}
        if condition is not None:
            args["ConditionExpression"] = condition.expression
            args["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
            args |= _expression_args(condition.expression, values=condition.values)
        self._call(self._client.put_item, **args)

    def update(
        self,
        key: Key,
        *,
        set_attrs: Item,
        remove: tuple[str, ...] = (),
        condition: Condition,
    ) -> Item:
        """Set and remove attributes of an item; the item as it is afterwards.

        Raises:
            ConditionFailed: ``condition`` did not hold.
        """
        found = self._call(
            self._client.update_item,
            TableName=self.name,
            ReturnValues="ALL_NEW",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
            **_update_args(key, set_attrs, remove, condition),
        )
        return load(cast("dict[str, Any]", found["Attributes"]))

    def update_with_new(
        self,
        key: Key,
        *,
        set_attrs: Item,
        remove: tuple[str, ...] = (),
        condition: Condition,
        new: list[Item],
    ) -> Item:
        """``update`` and write the ``new`` items in one transaction; the item afterwards.

        The new items must not exist yet (an id collision refuses the whole write).
        A transaction returns no attributes, so the updated item is read back
        (strongly consistent) once it committed.

        Raises:
            ConditionFailed: ``condition`` did not hold; nothing was written.
            TransactionRefused: one of ``new`` exists already; nothing was written.
        """
        operations: list[dict[str, Any]] = [
            {
                "Update": {
                    "TableName": self.name,
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    **_update_args(key, set_attrs, remove, condition),
                }
            }
        ]
        # each new item is new: a write never replaces an entry already stored
        absent = "attribute_not_exists(#pk)"
        for item in new:
            put = {"TableName": self.name, "Item": dump(item), "ConditionExpression": absent}
            operations.append({"Put": put | _expression_args(absent, values={})})
        try:
            self._call(self._client.transact_write_items, TransactItems=operations)
        except TransactionRefused as refused:
            if refused.codes and refused.codes[0] == "ConditionalCheckFailed":
                raise ConditionFailed(refused.items[0]) from refused
            raise
        after = self.get(key)
        if after is None:
            raise StoreUnavailable(f"DynamoDB table {self.name}: an updated item vanished")
        return after

    def query(
        self,
        key_condition: str,
        values: dict[str, Any],
        *,
        index: str | None = None,
        limit: int | None = None,
    ) -> Iterator[list[Item]]:
        """The matching items page by page, in sort-key order, fetching as it goes."""
        args: dict[str, Any] = {
            "TableName": self.name,
            "KeyConditionExpression": key_condition,
            "Limit": limit or self.page_size,
            **_expression_args(key_condition, values=values),
        }
        if index is None:
            args["ConsistentRead"] = True
        else:
            args["IndexName"] = index
        while True:
            page = self._call(self._client.query, **args)
            yield [load(cast("dict[str, Any]", item)) for item in page.get("Items", [])]
            last = page.get("LastEvaluatedKey")
            if not last:
                return
            args["ExclusiveStartKey"] = last

    def transact(self, writes: list[tuple[Item, Condition | None]]) -> None:
        """Write whole items all together or not at all.

        Raises:
            TransactionRefused: a condition did not hold; nothing was written.
        """
        operations: list[dict[str, Any]] = []
        for item, condition in writes:
            put: dict[str, Any] = {"TableName": self.name, "Item": dump(item)}
            if condition is not None:
                put["ConditionExpression"] = condition.expression
                put |= _expression_args(condition.expression, values=condition.values)
            operations.append({"Put": put})
        self._call(self._client.transact_write_items, TransactItems=operations)


def _update_args(
    key: Key, set_attrs: Item, remove: tuple[str, ...], condition: Condition
) -> dict[str, Any]:
    """The arguments an ``UpdateItem`` (alone or in a transaction) shares."""
    update = "SET " + ", ".join(f"#{name} = :set_{name}" for name in set_attrs)
    if remove:
        update += " REMOVE " + ", ".join(f"#{name}" for name in remove)
    values = condition.values | {f":set_{name}": value for name, value in set_attrs.items()}
    return {
        "Key": _key(key),
        "UpdateExpression": update,
        "ConditionExpression": condition.expression,
        **_expression_args(update, condition.expression, values=values),
    }


def _translate(exc: ClientError) -> Exception:
    response = cast("dict[str, Any]", exc.response)
    code = response.get("Error", {}).get("Code", "")
    if code == "ConditionalCheckFailedException":
        old = response.get("Item")
        return ConditionFailed(None if old is None else load(old))
    if code == "TransactionCanceledException":
        reasons = response.get("CancellationReasons", [])
        codes = [reason.get("Code", "None") for reason in reasons]
        if "ConditionalCheckFailed" in codes:
            # the item a refused condition saw, where the write asked for it
            items = [load(r["Item"]) if r.get("Item") else None for r in reasons]
            return TransactionRefused(codes, items)
        return StoreUnavailable(f"DynamoDB transaction cancelled: {codes}")
    if code in RETRYABLE:
        return StoreUnavailable(f"DynamoDB is busy ({code}); retry later")
    # A validation error or a missing table is a setup fault, not a state the
    # caller can act on; StoreUnavailable is the store error the tree has.
    return StoreUnavailable(f"DynamoDB refused the request ({code})")
