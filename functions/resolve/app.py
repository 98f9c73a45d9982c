"""The resolve function: approvals, questions, link pages, agents, sessions, OpenAPI."""

from typing import Any

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from signoff.api.app import build_resolver, serve
from signoff.api.spec import RESOLVE_ROUTERS
from signoff.api.telemetry import TRACED_MODULES, logger, metrics
from signoff.aws.deployment import api_from_env

API = api_from_env()
app = build_resolver(*RESOLVE_ROUTERS)
tracer = Tracer(patch_modules=TRACED_MODULES)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> Any:
    return serve(app, API, event, context)
