"""The queue port over SQS."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final, Self

from botocore.exceptions import BotoCoreError, ClientError

from signoff.errors import StoreUnavailable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef

    from signoff.settings import Deployment

__all__ = ["SqsQueue"]

# SendMessageBatch takes at most ten entries.
BATCH: Final = 10


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
        from signoff.settings import Deployment

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

    def send_batch(self, bodies: Sequence[dict[str, Any]]) -> None:
        """Enqueue every JSON message of ``bodies``, ten to a ``SendMessageBatch``.

        An entry SQS refused for its own reasons (throttled, an internal error) is sent
        once more; one it refused as the sender's fault is not.

        Raises:
            StoreUnavailable: SQS did not take some of them; the others stay sent.
        """
        texts = [json.dumps(body, separators=(",", ":")) for body in bodies]
        refused: list[str] = []
        for start in range(0, len(texts), BATCH):
            entries: list[SendMessageBatchRequestEntryTypeDef] = [
                {"Id": str(start + n), "MessageBody": text}
                for n, text in enumerate(texts[start : start + BATCH])
            ]
            failed = self._send_entries(entries)
            transient = {f["Id"] for f in failed if not f.get("SenderFault", False)}
            if transient:
                failed = [f for f in failed if f["Id"] not in transient] + self._send_entries(
                    [entry for entry in entries if entry["Id"] in transient]
                )
            refused += [f"{f['Id']}: {f.get('Code', '?')}" for f in failed]
        if refused:
            raise StoreUnavailable(
                f"SQS took {len(texts) - len(refused)} of {len(texts)} messages to {self.url};"
                f" refused {', '.join(refused)}"
            )

    def _send_entries(
        self, entries: list[SendMessageBatchRequestEntryTypeDef]
    ) -> list[dict[str, Any]]:
        """The entries of one ``SendMessageBatch`` that SQS did not take.

        Raises:
            StoreUnavailable: the request itself failed.
        """
        try:
            answer = self._client.send_message_batch(QueueUrl=self.url, Entries=entries)
        except (ClientError, BotoCoreError) as exc:
            raise StoreUnavailable(f"SQS send to {self.url} failed: {exc}") from exc
        return [dict(failed) for failed in answer.get("Failed", [])]
