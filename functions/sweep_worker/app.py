"""The sweep worker function: SQS batches of the sweep's tasks, each run until the deadline."""

from typing import Any

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from signoff.aws.sweep_schedule import SAFETY_MARGIN
from signoff.aws.sweeper import run_task_batch, sweeper_from_env
from signoff.telemetry import TRACED_MODULES, logger, metrics

SWEEPER = sweeper_from_env()
tracer = Tracer(patch_modules=TRACED_MODULES)


# No request or response in logs or traces: they carry resume tokens, link pages
# and tool arguments (DESIGN.md §5.6); exceptions may quote arguments too.
@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    budget = max(context.get_remaining_time_in_millis() / 1000 - SAFETY_MARGIN, 0.0)
    deadline = SWEEPER.clock.monotonic() + budget
    return run_task_batch(SWEEPER, event, context, deadline=deadline)
