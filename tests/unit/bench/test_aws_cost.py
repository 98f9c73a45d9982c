"""bench/aws_cost.py's DynamoDB capacity: computed from item sizes by the on-demand rules."""

from __future__ import annotations

from typing import Any

import pytest

from bench.aws_cost_recorder import Recorder
from bench.aws_cost_units import index_write_units, item_size, request_reads
from bench.metering import read_units, write_units


def text(size: int) -> dict[str, str]:
    return {"S": "x" * size}


def test_an_items_size_is_its_names_plus_its_values() -> None:
    # Strings by their UTF-8 bytes, numbers by a byte per two significant digits plus one,
    # lists and maps with 3 bytes of their own and one per element
    item = {"pk": {"S": "P#é"}, "n": {"N": "-12345.0"}, "ok": {"BOOL": True}}
    assert item_size(item) == (2 + 4) + (1 + 1 + 3) + (2 + 1)
    nested = {"m": {"M": {"a": {"S": "b"}}}, "l": {"L": [{"N": "7"}]}}
    assert item_size(nested) == (1 + 3 + 1 + 1 + 1) + (1 + 3 + 1 + 2)
    assert item_size(None) == 0


def test_units_round_up_per_kilobyte_written_and_four_read() -> None:
    assert [write_units(size) for size in (0, 1024, 1025, 3000)] == [1, 1, 2, 3]
    assert read_units(100, consistent=False) == 0.5
    assert read_units(4097, consistent=False) == 1.0
    assert read_units(4097, consistent=True) == 2.0


def test_a_sparse_index_is_written_when_the_item_is_in_it_before_or_after() -> None:
    key = {"pk": {"S": "P#1"}, "sk": {"S": "META"}}
    pending = {**key, "gsi1pk": {"S": "PENDING"}, "gsi1sk": {"S": "0001"}, "b": text(1500)}
    decided = {**key, "b": text(1500)}
    moved = {**pending, "gsi1sk": {"S": "0002"}}
    size = write_units(item_size(pending))
    assert size == 2
    assert index_write_units(None, pending) == size  # enters the index
    assert index_write_units(pending, decided) == size  # leaves it
    assert index_write_units(pending, moved) == 2 * size  # its key moves: delete + put
    assert index_write_units(pending, {**pending, "b": text(10)}) == 1  # updated in place
    assert index_write_units(decided, decided) == 0  # never in any index


def test_a_transactional_write_is_charged_twice_and_a_failed_condition_still_pays() -> None:
    # Given a recorder whose item images come from a dict, as the table holds them
    key = {"pk": {"S": "S#1"}, "sk": {"S": "META"}}
    stored: dict[str, Any] = {}
    recorder = Recorder()
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


def test_reads_charge_what_they_return() -> None:
    # An eventually consistent read of nothing still costs half a unit; a query the sum
    items = [{"b": text(3000)}, {"b": text(3000)}]
    assert request_reads("GetItem", {}, {}) == 0.5
    assert request_reads("Query", {"ConsistentRead": True}, {"Items": items}) == 2.0
    assert request_reads("TransactGetItems", {}, {"Responses": [{"Item": items[0]}]}) == 2.0


def test_a_binary_attribute_counts_its_raw_bytes_as_a_packed_body_is_stored() -> None:
    # A Binary value is its raw byte length (not its base64 on the wire) plus the name
    assert item_size({"zbody": {"B": b"\x00" * 1000}}) == 5 + 1000
    assert item_size({"bs": {"BS": [b"ab", b"cde"]}}) == 2 + 5
    # An item the store writes with a packed body, in the form botocore's client is
    # given (the adapter's dump): the same size as the store's own count of it
    from signoff.store.codec import item_size as stored_size
    from signoff.store.dynamodb.table import dump

    item = {"pk": "S#1", "sk": "CHUNK#0001", "zbody": bytes(range(256)) * 4}
    wire = dump(item)
    assert isinstance(wire["zbody"]["B"], bytes)
    assert item_size(wire) == stored_size(item) == 2 + 3 + 2 + 10 + 5 + 1024
    assert write_units(item_size(wire)) == 2


def test_the_recorders_own_image_reads_are_not_the_functions_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a recorder installed over botocore, reading each write's images with a
    # client of its own, and a table on moto
    import boto3
    from moto import mock_aws

    from tests.support.aws import fake_credentials

    fake_credentials(monkeypatch)
    with mock_aws():
        client = boto3.client("dynamodb")
        client.create_table(
            TableName="t",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        reader = boto3.client("dynamodb")
        recorder = Recorder(on=True)

        def images(table: str, key: dict[str, Any]) -> Any:
            return reader.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")

        uninstall = recorder.install(images)
        try:
            # When a function puts an item and reads it back
            recorder._local.function = "Message"
            key = {"pk": {"S": "a"}, "sk": {"S": "META"}}
            client.put_item(TableName="t", Item={**key, "b": text(10)})
            client.get_item(TableName="t", Key=key)
        finally:
            recorder._local.function = None
            uninstall()

    # Then its two requests are recorded, and not the two image reads around the put
    assert dict(recorder.requests) == {
        ("Message", "dynamodb", "PutItem"): 1,
        ("Message", "dynamodb", "GetItem"): 1,
    }
    assert recorder.wru["Message"] == 1
    assert recorder.rru["Message"] == 0.5  # the function's own read, eventually consistent
