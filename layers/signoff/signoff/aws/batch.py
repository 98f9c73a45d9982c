"""An SQS batch for the notifier: records delivered concurrently, failures reported singly.

Powertools' ``BatchProcessor`` reports partial failures, so only the records
whose delivery failed go back to the queue (and to the DLQ after
``maxReceiveCount``). It walks records one by one; the deliveries themselves
are started together on a bounded pool first, so a batch of ten records takes
about as long as its slowest send, not the sum.

It lives in the AWS wiring, not in ``signoff.notify``: the notifier itself is
core and knows no Powertools, SQS event or Lambda context.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)

from signoff.notify.message import NotifyMessage
from signoff.telemetry import notifications_sent

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    from signoff.notify.hub import FanoutReport, Notifier

__all__ = ["handle_batch"]

_POOL = ThreadPoolExecutor(max_workers=10, thread_name_prefix="batch")


def handle_batch(notifier: Notifier, event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Deliver every record of ``event``; ``batchItemFailures`` lists the ones to retry."""
    started: dict[str, Future[FanoutReport]] = {}
    for record in event.get("Records", []):
        started[record["messageId"]] = _POOL.submit(_deliver, notifier, record["body"])

    def record_handler(record: SQSRecord) -> None:
        report = started[record.message_id].result()  # re-raises the delivery's failure
        # Failures for good were logged and counted as they happened
        # (telemetry.notification_failed), also those of a delivery that raised.
        if report.sent:
            notifications_sent(len(report.sent))

    # A batch that failed as a whole is reported record by record too, so the
    # retry and DLQ accounting is the same for one failure or ten.
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    result = process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
    return dict(result)


def _deliver(notifier: Notifier, body: str) -> FanoutReport:
    """One record's subject, delivered.

    Raises:
        pydantic.ValidationError: the body is no ``NotifyMessage`` (a failed item).
        SendFailed: a channel failed transiently (a failed item: the queue retries it).
    """
    return notifier.deliver(NotifyMessage.parse(body).subject)
