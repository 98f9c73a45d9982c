"""What every reference handler shares: the required Powertools stack and a lazy client.

Nothing of signoff: Logger, Tracer (patching botocore and httpx, as signoff's
functions do), Metrics, and a DynamoDB client created on first use. ``SIGNOFF_TABLE``
is the template's table variable, so the reference reads the table its function does.
"""

from __future__ import annotations

import os
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger(service="reference")
metrics = Metrics(namespace="reference", service="reference")
tracer = Tracer(patch_modules=("botocore", "httpx"))

_client: Any = None


def table_item(pk: str) -> dict[str, Any]:
    """One item of the function's table, through a client made on the first call."""
    global _client
    if _client is None:
        _client = boto3.client("dynamodb")
    item: dict[str, Any] = _client.get_item(
        TableName=os.environ["SIGNOFF_TABLE"], Key={"pk": {"S": pk}, "sk": {"S": "META"}}
    ).get("Item", {})
    return item
