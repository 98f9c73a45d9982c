"""The local stack's AWS emulator keeps no copy of a table per DynamoDB transaction."""

from __future__ import annotations

import boto3
from moto.dynamodb.models.table import Table

from signoff_dev.local.emulator import AwsEmulator


def test_transactions_leave_no_table_copies_behind() -> None:
    emulator = AwsEmulator()
    emulator.start()
    try:
        client = boto3.client(
            "dynamodb",
            endpoint_url=emulator.endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        client.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        for i in range(30):
            put = {"Put": {"TableName": "t", "Item": {"pk": {"S": f"item-{i}"}}}}
            client.transact_write_items(TransactItems=[put])
        # moto deep-copies the table for each transaction's rollback and records every
        # model object it makes: 30 transactions would keep 30 copies of the table
        assert len(Table.instances_tracked) <= 1  # type: ignore[attr-defined]
        assert client.scan(TableName="t", Select="COUNT")["Count"] == 30
    finally:
        emulator.stop()
