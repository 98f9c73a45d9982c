"""The notifier function: SQS batches of paused items → their channels, partial failures."""

from typing import Any

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from signoff.api.telemetry import TRACED_MODULES, logger, metrics
from signoff.aws.notifier import notifier_from_env
from signoff.notify.batch import handle_batch

NOTIFIER = notifier_from_env()
tracer = Tracer(patch_modules=TRACED_MODULES)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle_batch(NOTIFIER, event, context)
