"""``DynamoTable``: the ``Table`` primitives as DynamoDB calls, and the one error edge.

Every call goes through ``DynamoTable._call``: a failed condition (alone or in
a transaction) becomes ``ConditionFailed`` carrying the item as it was, from
the same call; a transaction cancelled because another request was writing one
of its items is tried again a few times (``transact``), then becomes
``TransactionConflicted``; every other botocore error becomes ``StoreUnavailable``.
Nothing from botocore leaves this module. Items are plain Python values here
and DynamoDB's attribute-value form on the wire (``dump`` / ``load``).
"""

from __future__ import annotations

import random
import time
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError, ClientError

from signoff.errors import StoreUnavailable, TransactionConflicted
from signoff.store.table import Attr, ConditionFailed, Placeholders, Put, Update

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from mypy_boto3_dynamodb.client import DynamoDBClient

    from signoff.store.table import Condition, Index, Item, Key

__all__ = ["DynamoTable", "dump", "load"]

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
# A transaction cancelled for a TransactionConflict (another request was writing
# one of its items) wrote nothing, and botocore does not retry a cancellation: it
# is tried this many times in all, after a full-jitter pause each time (seconds:
# uniform from 0 to the base doubled per try, at most the cap).
CONFLICT_TRIES: Final = 4
CONFLICT_PAUSE: Final = (0.01, 0.1)
_SERIALIZER = TypeSerializer()
_DESERIALIZER = TypeDeserializer()


def _to_number(value: Any) -> Any:
    if isinstance(value, float):
        # repr keeps every digit, so the float reads back identical
        return Decimal(repr(value))
    return value


def _from_number(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Binary):
        # a packed body (``zbody``): the adapters' items hold plain bytes (the stubs
        # leave ``value`` out, and type ``__bytes__`` as returning str)
        data: bytes = value.value  # type: ignore[attr-defined]
        return data
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


def _expressions(slots: Placeholders, **expressions: str) -> dict[str, Any]:
    """Request arguments: the rendered expressions with their names and values."""
    args: dict[str, Any] = dict(expressions)
    args["ExpressionAttributeNames"] = slots.names
    if slots.values:
        args["ExpressionAttributeValues"] = dump(slots.values)
    return args


def _write(name: str, write: Put | Update) -> dict[str, Any]:
    """The arguments of a PutItem or UpdateItem, alone or in a transaction."""
    slots = Placeholders()
    expressions: dict[str, str] = {}
    if isinstance(write, Put):
        args: dict[str, Any] = {"TableName": name, "Item": dump(write.item)}
    else:
        args = {"TableName": name, "Key": _key(write.key)}
        sets = [f"{slots.name(attr)} = {slots.value(v)}" for attr, v in write.set_attrs.items()]
        removes = [slots.name(attr) for attr in write.remove]
        clauses = [("SET", sets), ("REMOVE", removes)]
        expressions["UpdateExpression"] = " ".join(
            f"{verb} {', '.join(parts)}" for verb, parts in clauses if parts
        )
    if write.condition is not None:
        expressions["ConditionExpression"] = write.condition.render(slots)
        args["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    if expressions:
        args |= _expressions(slots, **expressions)
    return args


class DynamoTable:
    """A ``Table``: one DynamoDB table, reached through a low-level boto3 client."""

    def __init__(self, client: DynamoDBClient, name: str, *, page_size: int = 100) -> None:
        self.name = name
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
        """Write a whole item (PutItem).

        Raises:
            ConditionFailed: ``condition`` did not hold.
        """
        self._call(self._client.put_item, **_write(self.name, Put(item, condition)))

    def update(self, update: Update) -> Item:
        """Apply ``update`` (UpdateItem); the item as it is afterwards.

        Raises:
            ConditionFailed: its condition did not hold.
        """
        args = _write(self.name, update)
        found = self._call(self._client.update_item, ReturnValues="ALL_NEW", **args)
        return load(cast("dict[str, Any]", found["Attributes"]))

    def transact(self, writes: Sequence[Put | Update]) -> None:
        """Apply every write or none (TransactWriteItems).

        Raises:
            ConditionFailed: the condition of write number ``write`` did not hold.
            TransactionConflicted: other requests were writing its items on each of
                ``CONFLICT_TRIES`` tries; nothing was written.
        """
        operations = [
            {"Put" if isinstance(write, Put) else "Update": _write(self.name, write)}
            for write in writes
        ]
        base, cap = CONFLICT_PAUSE
        for attempt in range(CONFLICT_TRIES):
            try:
                self._call(self._client.transact_write_items, TransactItems=operations)
                return
            except TransactionConflicted:
                if attempt == CONFLICT_TRIES - 1:
                    raise
            # full jitter: racing writers do not come back in step
            time.sleep(random.uniform(0, min(cap, base * 2**attempt)))

    def query(
        self,
        partition: str,
        sort: Condition | None = None,
        *,
        index: Index,
        limit: int | None = None,
        descending: bool = False,
    ) -> Iterator[list[Item]]:
        """Items of one partition of ``index`` whose sort key meets ``sort``, page by page."""
        slots = Placeholders()
        # a key condition is a bare conjunction: DynamoDB refuses parentheses in it
        condition = Attr(index.pk).eq(partition).render(slots)
        if sort is not None:
            condition += " AND " + sort.render(slots)
        args: dict[str, Any] = {
            "TableName": self.name,
            "Limit": limit or self.page_size,
            **_expressions(slots, KeyConditionExpression=condition),
        }
        if descending:
            args["ScanIndexForward"] = False
        if index.name is None:
            args["ConsistentRead"] = True
        else:
            args["IndexName"] = index.name
        while True:
            page = self._call(self._client.query, **args)
            yield [load(cast("dict[str, Any]", item)) for item in page.get("Items", [])]
            last = page.get("LastEvaluatedKey")
            if not last:
                return
            args["ExclusiveStartKey"] = last

    def scan(self, keep: Condition | None = None) -> Iterator[list[Item]]:
        """Every item meeting ``keep`` (Scan with a FilterExpression), page by page."""
        args: dict[str, Any] = {"TableName": self.name, "Limit": self.page_size}
        args["ConsistentRead"] = True
        if keep is not None:
            slots = Placeholders()
            args |= _expressions(slots, FilterExpression=keep.render(slots))
        while True:
            page = self._call(self._client.scan, **args)
            yield [load(cast("dict[str, Any]", item)) for item in page.get("Items", [])]
            last = page.get("LastEvaluatedKey")
            if not last:
                return
            args["ExclusiveStartKey"] = last


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
            # the first refused write, with the item its condition saw
            number = codes.index("ConditionalCheckFailed")
            old = reasons[number].get("Item")
            return ConditionFailed(None if not old else load(old), write=number)
        if "TransactionConflict" in codes:
            # another request was writing one of its items; nothing was written
            return TransactionConflicted(f"DynamoDB transaction cancelled for a conflict: {codes}")
        return StoreUnavailable(f"DynamoDB transaction cancelled: {codes}")
    if code in RETRYABLE:
        return StoreUnavailable(f"DynamoDB is busy ({code}); retry later")
    # A validation error or a missing table is a setup fault, not a state the
    # caller can act on; StoreUnavailable is the store error the tree has.
    return StoreUnavailable(f"DynamoDB refused the request ({code})")
