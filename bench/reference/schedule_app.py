"""The schedule reference: the required stack around one table read, no router."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from _stack import logger, metrics, table_item, tracer

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return {"found": bool(table_item("SWEEP"))}
