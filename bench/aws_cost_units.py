"""``bench/aws_cost.py``'s DynamoDB capacity of a request in DynamoDB's wire form.

An item's size as DynamoDB bills it (attribute names plus values), what a write costs
in the template's sparse indexes, and the items a request writes and the read units
its answer costs. The rules are ``bench/metering.py``'s, shared with
``bench/capacity.py``; the items here are botocore's (``{"S": ...}``), around moto.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bench.metering import KEY, GlobalIndex, global_indexes, index_writes, read_units

if TYPE_CHECKING:
    from collections.abc import Sequence

ROOT: Final = Path(__file__).resolve().parents[1]


def template_indexes(template: Path | None = None) -> tuple[GlobalIndex, ...]:
    """The global secondary indexes ``template`` (default: the project's) gives the table."""
    from signoff_dev.local.template import load_template

    return global_indexes(load_template(template or ROOT / "template.yaml"))


INDEXES: Final = template_indexes()


def _value_size(value: dict[str, Any]) -> int:
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "B":
        return len(inner)
    if kind == "N":
        digits = inner.lstrip("-").replace(".", "").lstrip("0") or "0"
        return 1 + math.ceil(len(digits) / 2)
    if kind in {"BOOL", "NULL"}:
        return 1
    if kind == "L":
        return 3 + sum(1 + _value_size(item) for item in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + _value_size(v) for k, v in inner.items())
    if kind == "SS":
        return sum(len(s.encode()) for s in inner)
    if kind == "NS":
        return sum(_value_size({"N": n}) for n in inner)
    return sum(len(b) for b in inner)  # BS


def item_size(item: dict[str, Any] | None) -> int:
    """An item's size as DynamoDB bills it: each attribute's name plus its value."""
    return sum(len(name.encode()) + _value_size(v) for name, v in (item or {}).items())


def index_write_units(
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    indexes: Sequence[GlobalIndex] = INDEXES,
) -> int:
    """What a write costs in the sparse indexes the item is in, then or now."""
    return sum(
        units for index in indexes for _, units in index_writes(index, before, after, item_size)
    )


def _key_of(item: dict[str, Any]) -> dict[str, Any]:
    return {name: item[name] for name in KEY}


def request_writes(
    operation: str, params: dict[str, Any]
) -> list[tuple[str, dict[str, Any], bool, dict[str, Any] | None]]:
    if operation == "PutItem":
        return [(params["TableName"], _key_of(params["Item"]), False, params["Item"])]
    if operation in {"UpdateItem", "DeleteItem"}:
        return [(params["TableName"], params["Key"], False, None)]
    if operation == "TransactWriteItems":
        found = []
        for entry in params["TransactItems"]:
            ((_, spec),) = entry.items()
            item = spec.get("Item")
            found.append((spec["TableName"], spec.get("Key") or _key_of(item), True, item))
        return found
    if operation == "BatchWriteItem":
        return [
            (
                table,
                request.get("DeleteRequest", {}).get("Key")
                or _key_of(request["PutRequest"]["Item"]),
                False,
                request.get("PutRequest", {}).get("Item"),
            )
            for table, requests in params["RequestItems"].items()
            for request in requests
        ]
    return []


def request_reads(operation: str, params: dict[str, Any], answer: dict[str, Any]) -> float:
    consistent = bool(params.get("ConsistentRead"))
    if operation == "GetItem":
        return read_units(item_size(answer.get("Item")), consistent=consistent)
    if operation in {"Query", "Scan"}:
        total = sum(item_size(item) for item in answer.get("Items", []))
        return read_units(total, consistent=consistent)
    if operation == "TransactGetItems":
        return sum(
            2 * read_units(item_size(got.get("Item")), consistent=True)
            for got in answer.get("Responses", [])
        )
    if operation == "BatchGetItem":
        return sum(
            read_units(item_size(item), consistent=consistent)
            for items in answer.get("Responses", {}).values()
            for item in items
        )
    return 0.0
