"""The local stand-ins for Lambda's event sources: the SQS trigger and the schedules.

``QueuePoller`` is an SQS event source mapping: it long-polls the queue (up to
``BatchSize`` messages, at most 10, one second at a time — the template's
batching window), hands the batch to the function as the Lambda service would
build it, and deletes what was handled. With ``ReportBatchItemFailures`` only
the records the function did not list in ``batchItemFailures`` are deleted;
the listed ones become visible again after the queue's visibility timeout and
go to the dead-letter queue after ``maxReceiveCount`` receives. A function
that raises fails the whole batch: nothing is deleted.

``Schedule`` is an EventBridge rule on a period: it invokes the function with a
scheduled event every period, the first one period after start. A rule with an
``Input`` (an agent's run) delivers that JSON as the event instead, unchanged, as
EventBridge does, and says on the console what each run returned.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import traceback
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from signoff.errors import ConfigError
from signoff_dev.local.template import ACCOUNT_ID, REGION, TEMPLATE_FILE

if TYPE_CHECKING:
    from collections.abc import Callable

    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import MessageTypeDef

__all__ = ["QueuePoller", "Schedule", "rate_seconds"]

_RATE: Final = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_UNIT_SECONDS: Final = {"minute": 60, "hour": 3600, "day": 86400}
# How long a poller waits after SQS itself failed before it asks again.
_BACKOFF: Final = 1.0


def rate_seconds(expression: str, where: str) -> float:
    """The period of an EventBridge ``rate(...)`` expression, in seconds.

    Raises:
        ConfigError: not a rate expression (a ``cron(...)`` one, for instance).
    """
    match = _RATE.match(expression.strip())
    if match is None:
        raise ConfigError(TEMPLATE_FILE, where, f"{expression!r}: only rate(...) runs locally")
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2).removesuffix("s")]


class QueuePoller:
    """Feeds one queue's messages to one function, honouring its partial batch response."""

    def __init__(
        self,
        *,
        sqs: SQSClient,
        queue_url: str,
        queue_arn: str,
        batch_size: int,
        report_failures: bool,
        invoke: Callable[[dict[str, Any]], Any],
        log: Callable[[str], None],
        stop: threading.Event,
    ) -> None:
        self.queue_url = queue_url
        self.queue_arn = queue_arn
        self.batch_size = max(1, min(batch_size, 10))
        self.report_failures = report_failures
        self._sqs = sqs
        self._invoke = invoke
        self._log = log
        self._stop = stop
        self._thread = threading.Thread(target=self._run, name="sqs-poller", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def poll_once(self) -> int:
        """Receive one batch (waiting up to a second), deliver it; the number received.

        Raises:
            ClientError, BotoCoreError: SQS failed (the loop waits and asks again).
        """
        answer = self._sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self.batch_size,
            WaitTimeSeconds=1,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        messages = answer.get("Messages", [])
        if not messages:
            return 0
        event = {"Records": [self._record(message) for message in messages]}
        try:
            result = self._invoke(event)
        except Exception:  # a failed invocation: every record comes back after the timeout
            self._log(
                f"the queue's function failed; the batch is retried:\n{traceback.format_exc()}"
            )
            return len(messages)
        done = self._handled(messages, result)
        if done:
            self._sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)
                ],
            )
        return len(messages)

    def _handled(self, messages: list[MessageTypeDef], result: Any) -> list[MessageTypeDef]:
        """The messages to delete: all, or those missing from ``batchItemFailures``."""
        if not self.report_failures:
            return messages
        failures = result.get("batchItemFailures", []) if isinstance(result, dict) else []
        failed = {str(item.get("itemIdentifier")) for item in failures}
        if failed and not failed <= {m["MessageId"] for m in messages}:
            # Lambda treats an unknown identifier as the whole batch failing.
            return []
        return [m for m in messages if m["MessageId"] not in failed]

    def _record(self, message: MessageTypeDef) -> dict[str, Any]:
        """One SQS record as the Lambda service passes it."""
        attributes: dict[str, dict[str, Any]] = {
            name: {
                "stringValue": value.get("StringValue"),
                "binaryValue": value.get("BinaryValue"),
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": value.get("DataType", "String"),
            }
            for name, value in message.get("MessageAttributes", {}).items()
        }
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message.get("Body", ""),
            "attributes": dict(message.get("Attributes", {})),
            "messageAttributes": attributes,
            "md5OfBody": message.get("MD5OfBody", ""),
            "eventSource": "aws:sqs",
            "eventSourceARN": self.queue_arn,
            "awsRegion": REGION,
        }

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except (ClientError, BotoCoreError) as exc:
                if self._stop.is_set():
                    return  # the emulator is going away with the stack
                self._log(f"reading {self.queue_url} failed: {exc}; retrying")
                self._stop.wait(_BACKOFF)


class Schedule:
    """Invokes a function every ``period`` seconds with EventBridge's event for the rule.

    ``input_event`` is the rule's ``Input``: when given, it is the event of every run.
    """

    def __init__(
        self,
        *,
        rule: str,
        period: float,
        invoke: Callable[[dict[str, Any]], Any],
        log: Callable[[str], None],
        stop: threading.Event,
        input_event: dict[str, Any] | None = None,
    ) -> None:
        self.rule = rule
        self.period = period
        self.input_event = input_event
        self._invoke = invoke
        self._log = log
        self._stop = stop
        self._thread = threading.Thread(target=self._run, name=f"schedule-{rule}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def event(self) -> dict[str, Any]:
        """The event EventBridge delivers for one run of the rule (its Input, if it has one)."""
        if self.input_event is not None:
            return copy.deepcopy(self.input_event)  # a fresh copy per run
        return {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": ACCOUNT_ID,
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "region": REGION,
            "resources": [f"arn:aws:events:{REGION}:{ACCOUNT_ID}:rule/{self.rule}"],
            "detail": {},
        }

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            try:
                result = self._invoke(self.event())
            except Exception:  # a failed run is logged; the next period runs again
                self._log(f"{self.rule} failed:\n{traceback.format_exc()}")
                continue
            if self.input_event is not None:
                given = json.dumps(self.input_event, ensure_ascii=False)
                answer = json.dumps(result, default=str)
                self._log(f"schedule {self.rule} ran, its Input {given} as the event: {answer}")
            elif isinstance(result, dict) and any(
                isinstance(v, list) and v for v in result.values()
            ):
                # What a run did, by id; quiet when it found nothing to do, and for the
                # sweeper's plan (a count of tasks: the sweep workers do the work).
                self._log(f"{self.rule}: {result}")
