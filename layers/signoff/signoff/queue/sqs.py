"""The queue port over SQS."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Self

from botocore.exceptions import BotoCoreError, ClientError

from signoff.errors import StoreUnavailable
from signoff.settings import Deployment

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["SqsQueue"]


class SqsQueue:
    """Messages to one SQS queue."""

    def __init__(self, url: str, client: SQSClient) -> None:
        self.url = url
        self._client = client

    @classmethod
    def from_env(cls, deployment: Deployment | None = None) -> Self:
        """The queue named by ``SIGNOFF_NOTIFY_QUEUE_URL``, with a default boto3 client.

        Raises:
            UsageError: ``SIGNOFF_NOTIFY_QUEUE_URL`` is not set.
        """
        from signoff.awsclients import lazy_client

        url = (deployment or Deployment.from_env()).need("notify_queue_url")
        return cls(url, lazy_client("sqs"))

    def send(self, body: dict[str, Any]) -> None:
        """Enqueue one JSON message.

        Raises:
            StoreUnavailable: SQS did not take it; the sweeper re-drives it.
        """
        text = json.dumps(body, separators=(",", ":"))
        try:
            self._client.send_message(QueueUrl=self.url, MessageBody=text)
        except (ClientError, BotoCoreError) as exc:
            raise StoreUnavailable(f"SQS send to {self.url} failed: {exc}") from exc
