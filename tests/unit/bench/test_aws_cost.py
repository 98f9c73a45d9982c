"""bench/aws_cost.py's DynamoDB capacity: computed from item sizes by the on-demand rules."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench" / "aws_cost.py"


@pytest.fixture(scope="module")
def cost() -> Any:
    spec = importlib.util.spec_from_file_location("aws_cost", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["aws_cost"] = module
    spec.loader.exec_module(module)
    return module


def text(size: int) -> dict[str, str]:
    return {"S": "x" * size}


def test_an_items_size_is_its_names_plus_its_values(cost: Any) -> None:
    # Strings by their UTF-8 bytes, numbers by a byte per two significant digits plus one,
    # lists and maps with 3 bytes of their own and one per element
    item = {"pk": {"S": "P#é"}, "n": {"N": "-12345.0"}, "ok": {"BOOL": True}}
    assert cost.item_size(item) == (2 + 4) + (1 + 1 + 3) + (2 + 1)
    nested = {"m": {"M": {"a": {"S": "b"}}}, "l": {"L": [{"N": "7"}]}}
    assert cost.item_size(nested) == (1 + 3 + 1 + 1 + 1) + (1 + 3 + 1 + 2)
    assert cost.item_size(None) == 0


def test_units_round_up_per_kilobyte_written_and_four_read(cost: Any) -> None:
    assert [cost.write_units(size) for size in (0, 1024, 1025, 3000)] == [1, 1, 2, 3]
    assert cost.read_units(100, consistent=False) == 0.5
    assert cost.read_units(4097, consistent=False) == 1.0
    assert cost.read_units(4097, consistent=True) == 2.0


def test_a_sparse_index_is_written_when_the_item_is_in_it_before_or_after(cost: Any) -> None:
    key = {"pk": {"S": "P#1"}, "sk": {"S": "META"}}
    pending = {**key, "gsi1pk": {"S": "PENDING"}, "gsi1sk": {"S": "0001"}, "b": text(1500)}
    decided = {**key, "b": text(1500)}
    moved = {**pending, "gsi1sk": {"S": "0002"}}
    size = cost.write_units(cost.item_size(pending))
    assert size == 2
    assert cost.index_write_units(None, pending) == size  # enters the index
    assert cost.index_write_units(pending, decided) == size  # leaves it
    assert cost.index_write_units(pending, moved) == 2 * size  # its key moves: delete + put
    assert cost.index_write_units(pending, {**pending, "b": text(10)}) == 1  # updated in place
    assert cost.index_write_units(decided, decided) == 0  # never in any index


def test_a_transactional_write_is_charged_twice_and_a_failed_condition_still_pays(
    cost: Any,
) -> None:
    # Given a recorder whose item images come from a dict, as the table holds them
    key = {"pk": {"S": "S#1"}, "sk": {"S": "META"}}
    stored: dict[str, Any] = {}
    recorder = cost.Recorder()
    item = {**key, "gsi3pk": {"S": "LEASE"}, "gsi3sk": {"S": "0009"}, "b": text(1500)}

    def images(table: str, wanted: dict[str, Any]) -> Any:
        return stored.get(table)

    def put() -> dict[str, Any]:
        stored["t"] = item
        return {}

    # When a transaction puts a 1.5 KB item that enters the lease index
    request = {"TransactItems": [{"Put": {"TableName": "t", "Item": item}}]}
    recorder._dynamodb("Message", "TransactWriteItems", request, put, images)
    # Then it costs 2 x 2 WRU in the table and 2 in the index
    assert recorder.wru["Message"] == 6

    # When a conditional update of it fails
    def refused() -> dict[str, Any]:
        raise RuntimeError("ConditionalCheckFailedException")

    with pytest.raises(RuntimeError):
        recorder._dynamodb("Message", "UpdateItem", {"TableName": "t", "Key": key}, refused, images)
    # Then the write is still charged, 2 WRU for the item, and no index write
    assert recorder.wru["Message"] == 6 + 2


def test_reads_charge_what_they_return(cost: Any) -> None:
    # An eventually consistent read of nothing still costs half a unit; a query the sum
    items = [{"b": text(3000)}, {"b": text(3000)}]
    assert cost._reads("GetItem", {}, {}) == 0.5
    assert cost._reads("Query", {"ConsistentRead": True}, {"Items": items}) == 2.0
    assert cost._reads("TransactGetItems", {}, {"Responses": [{"Item": items[0]}]}) == 2.0


def test_a_binary_attribute_counts_its_raw_bytes_as_a_packed_body_is_stored(cost: Any) -> None:
    # A Binary value is its raw byte length (not its base64 on the wire) plus the name
    assert cost.item_size({"zbody": {"B": b"\x00" * 1000}}) == 5 + 1000
    assert cost.item_size({"bs": {"BS": [b"ab", b"cde"]}}) == 2 + 5
    # An item the store writes with a packed body, in the form botocore's client is
    # given (the adapter's dump): the same size as the store's own count of it
    from signoff.store.codec import item_size
    from signoff.store.dynamodb.table import dump

    item = {"pk": "S#1", "sk": "CHUNK#0001", "zbody": bytes(range(256)) * 4}
    wire = dump(item)
    assert isinstance(wire["zbody"]["B"], bytes)
    assert cost.item_size(wire) == item_size(item) == 2 + 3 + 2 + 10 + 5 + 1024
    assert cost.write_units(cost.item_size(wire)) == 2
