"""The notifier function: SQS batches of paused items → their channels, partial failures."""

from typing import Any

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from signoff.aws.batch import handle_batch
from signoff.aws.notifier import notifier_from_env
from signoff.telemetry import TRACED_MODULES, logger, metrics

NOTIFIER = notifier_from_env()
tracer = Tracer(patch_modules=TRACED_MODULES)


# No request or response in logs or traces: they carry resume tokens, link pages
# and tool arguments (DESIGN.md §5.6); exceptions may quote arguments too.
@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle_batch(NOTIFIER, event, context)
