"""The DynamoDB adapters of the store ports: one table, large values in ``Blobs``.

Keys, item layout, TTL and the rules live in ``signoff.store.codec``; this
package supplies DynamoDB's primitives and turns its errors into signoff's.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Self

from signoff.clock import SystemClock
from signoff.errors import UsageError
from signoff.store.codec import Codec
from signoff.store.dynamodb.api_keys import DynamoApiKeys
from signoff.store.dynamodb.outbox import DynamoAudit, DynamoOutbox
from signoff.store.dynamodb.pending import DynamoPendingItems
from signoff.store.dynamodb.sessions import DynamoSessions
from signoff.store.dynamodb.table import DynamoTable

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from signoff.clock import Clock
    from signoff.store.base import Blobs

__all__ = [
    "DynamoApiKeys",
    "DynamoAudit",
    "DynamoOutbox",
    "DynamoPendingItems",
    "DynamoSessions",
    "DynamoStore",
]


class DynamoStore:
    """Every store port over one DynamoDB table, with large values in ``blobs``."""

    def __init__(
        self,
        client: DynamoDBClient,
        table: str,
        blobs: Blobs,
        *,
        clock: Clock | None = None,
        page_size: int = 100,
    ) -> None:
        wall = clock or SystemClock()
        self.table = DynamoTable(
            client, table, now=lambda: wall.now().timestamp(), page_size=page_size
        )
        self.blobs = blobs
        coder = Codec(blobs)
        self.sessions = DynamoSessions(self.table, coder)
        self.pending = DynamoPendingItems(self.table, coder)
        self.outbox = DynamoOutbox(self.table, coder)
        self.audit = DynamoAudit(self.table, coder)
        self.api_keys = DynamoApiKeys(self.table, coder)

    @classmethod
    def from_env(cls, *, clock: Clock | None = None, page_size: int = 100) -> Self:
        """The table named by ``SIGNOFF_TABLE`` and the bucket by ``SIGNOFF_BUCKET``.

        Raises:
            UsageError: one of the variables is not set.
        """
        from signoff.awsclients import lazy_client
        from signoff.store.s3 import S3Blobs

        table = os.environ.get("SIGNOFF_TABLE")
        if not table:
            raise UsageError("SIGNOFF_TABLE is not set; template.yaml sets it for every function")
        client = lazy_client("dynamodb")
        return cls(client, table, S3Blobs.from_env(), clock=clock, page_size=page_size)
