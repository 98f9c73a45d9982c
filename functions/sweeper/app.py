"""The sweeper function (every minute): re-send, expire, resume what was left behind."""

from typing import Any

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from signoff.api.telemetry import logger, metrics
from signoff.aws.notifier import sweeper_from_env

SWEEPER = sweeper_from_env()
tracer = Tracer()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = SWEEPER.sweep()
    return {"requeued": report.requeued, "expired": report.expired, "resumed": report.resumed}
