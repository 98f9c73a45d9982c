"""The sweeper function (every minute): plans the sweep, a task per job and shard, onto a queue."""

import time
from typing import Any

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from signoff.aws.sweep_schedule import SAFETY_MARGIN, scheduled_sweep
from signoff.telemetry import TRACED_MODULES, logger, metrics

SWEEP = scheduled_sweep()
tracer = Tracer(patch_modules=TRACED_MODULES)


# No request or response in logs or traces: they carry resume tokens, link pages
# and tool arguments (DESIGN.md §5.6); exceptions may quote arguments too.
@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    budget = max(context.get_remaining_time_in_millis() / 1000 - SAFETY_MARGIN, 0.0)
    return SWEEP(time.monotonic() + budget)
