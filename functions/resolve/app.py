"""The resolve function: approvals, questions, link pages, agents, sessions, OpenAPI."""

from typing import Any

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from signoff.api.app import build_resolver, serve
from signoff.api.spec import MESSAGE_ROUTERS, RESOLVE_ROUTERS
from signoff.aws.deployment import api_from_env
from signoff.telemetry import TRACED_MODULES, logger, metrics

API = api_from_env()
# Unmatched requests come here too (the API's $default route): 405 for the message route.
app = build_resolver(*RESOLVE_ROUTERS, elsewhere=MESSAGE_ROUTERS)
tracer = Tracer(patch_modules=TRACED_MODULES)


# No request or response in logs or traces: they carry resume tokens, link pages
# and tool arguments (DESIGN.md §5.6); exceptions may quote arguments too.
@logger.inject_lambda_context(
    correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False
)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> Any:
    return serve(app, API, event, context)
