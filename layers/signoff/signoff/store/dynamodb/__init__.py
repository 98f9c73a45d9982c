"""The DynamoDB store: every store port over one ``DynamoTable``, large values in ``Blobs``.

The ports are the classes the in-memory store uses too; this package supplies
only DynamoDB's primitives (``table.py``) and turns its errors into signoff's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from signoff.clock import SystemClock
from signoff.settings import Deployment
from signoff.store.codec import Codec
from signoff.store.dynamodb.table import DynamoTable
from signoff.store.keys import Shards
from signoff.store.table_ports import TablePorts

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from signoff.clock import Clock
    from signoff.store.base import Blobs

__all__ = ["DynamoStore", "DynamoTable"]


class DynamoStore(TablePorts):
    """Every store port over one DynamoDB table, with large values in ``blobs``;
    each port is built on first use (``TablePorts``)."""

    table: DynamoTable

    def __init__(
        self,
        client: DynamoDBClient,
        table: str,
        blobs: Blobs | None,
        *,
        clock: Clock | None = None,
        page_size: int = 100,
        shards: Shards | None = None,
    ) -> None:
        wall = clock or SystemClock()
        self.table = DynamoTable(client, table, page_size=page_size)
        self.blobs = blobs

        def now() -> float:
            return wall.now().timestamp()

        super().__init__(Codec(blobs, shards=shards), now=now)

    @classmethod
    def from_env(
        cls,
        *,
        clock: Clock | None = None,
        page_size: int = 100,
        deployment: Deployment | None = None,
        need_bucket: bool = True,
    ) -> Self:
        """The table named by ``SIGNOFF_TABLE`` and the bucket by ``SIGNOFF_BUCKET``.

        ``need_bucket=False`` is for callers that touch only small records (the
        API keys): without ``SIGNOFF_BUCKET`` such a store refuses a record too
        large for one item instead of failing at the start.

        Raises:
            UsageError: ``SIGNOFF_TABLE`` is not set, or ``SIGNOFF_BUCKET`` when needed.
        """
        from signoff.awsclients import lazy_client
        from signoff.store.s3 import S3Blobs

        deployment = deployment or Deployment.from_env()
        table = deployment.need("table")
        client = lazy_client("dynamodb")
        blobs = S3Blobs.from_env(deployment) if need_bucket or deployment.bucket else None
        shards = Shards(sweep=deployment.sweep_shards, listing=deployment.listing_shards)
        return cls(client, table, blobs, clock=clock, page_size=page_size, shards=shards)
