"""The HTTP API as one Powertools resolver: routes, validation, errors, limits, OpenAPI."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from signoff.api.errors import error_response, register_error_handlers
from signoff.errors import MethodNotAllowed, PayloadTooLarge

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.api_gateway import Router

    from signoff.api.context import Api

__all__ = ["API_TITLE", "build_resolver", "openapi_document", "serve"]

API_TITLE = "signoff"
API_VERSION = "1.0.0"
API_DESCRIPTION = (
    "Agent turns that pause, durably, for a human sign-off. Callers authenticate with "
    "an API key (`x-api-key`); pending items can also be decided with a resume token "
    "(`x-signoff-token` or `?token=`) from a notification."
)


def build_resolver(*routers: Router) -> APIGatewayHttpResolver:
    """A resolver serving ``routers`` with validation, the error table and body limits."""
    app = APIGatewayHttpResolver(enable_validation=True)
    for router in routers:
        app.include_router(router)
    register_error_handlers(app)

    @app.not_found
    def not_found(_: Exception) -> Response[str]:
        event = app.current_event
        method = event.http_method.upper()
        # A known path with another method is a 405, not a 404.
        allowed = sorted(
            {
                route.method
                for route in (*app._static_routes, *app._dynamic_routes)
                if route.method != method and route.rule.match(event.path)
            }
        )
        if allowed:
            error = MethodNotAllowed(method, allowed)
            return error_response(405, "method_not_allowed", str(error), allowed=allowed)
        return error_response(404, "not_found", f"no route {method} {event.path}")

    return app


def serve(app: APIGatewayHttpResolver, api: Api, event: dict[str, Any], context: Any) -> Any:
    """Answer one HTTP request: refuse an oversized body, then route."""
    body = event.get("body") or ""
    size = len(body.encode("utf-8")) if isinstance(body, str) else len(body)
    if event.get("isBase64Encoded"):
        size = size * 3 // 4
    if size > api.max_body_bytes:
        # Checked before routing so no validation or handler ever sees the body.
        error = PayloadTooLarge(size, api.max_body_bytes)
        return {
            "statusCode": 413,
            "headers": {"Content-Type": "application/json"},
            "body": json.dumps({"error": "payload_too_large", "detail": str(error)}),
            "isBase64Encoded": False,
        }
    app.append_context(api=api)
    return app.resolve(event, context)


def openapi_document(*routers: Router) -> dict[str, Any]:
    """The OpenAPI document of every route, as served at ``/openapi.json``."""
    app = build_resolver(*routers)
    schema: dict[str, Any] = json.loads(
        app.get_openapi_json_schema(
            title=API_TITLE, version=API_VERSION, description=API_DESCRIPTION
        )
    )
    return schema
