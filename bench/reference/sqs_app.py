"""The SQS reference: the required stack around a ``BatchProcessor`` with partial failures."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from _stack import logger, metrics, table_item, tracer
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def record_handler(record: SQSRecord) -> None:
    table_item(f"P#{json.loads(record.body)['pendingId']}")


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
