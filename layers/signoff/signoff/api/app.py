"""The HTTP API as one Powertools resolver: routes, validation, errors, limits, OpenAPI."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from signoff.api.body import checked_event, is_page
from signoff.api.errors import error_payload, error_response, register_error_handlers
from signoff.errors import MethodNotAllowed, SignoffError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from aws_lambda_powertools.event_handler.api_gateway import Route, Router

    from signoff.api.context import Api

__all__ = ["API_TITLE", "build_resolver", "openapi_document", "serve"]

API_TITLE = "signoff"
API_VERSION = "1.0.0"
API_DESCRIPTION = (
    "Agent turns that pause, durably, for a human sign-off. Callers authenticate with "
    "an API key (`x-api-key`); pending items can also be decided with a resume token "
    "(`x-signoff-token` or `?token=`) from a notification."
)


def build_resolver(*routers: Router, elsewhere: Iterable[Router] = ()) -> APIGatewayHttpResolver:
    """A resolver serving ``routers`` with validation, the error table and body limits.

    ``elsewhere`` are routes another function serves: a request for one of their
    paths with a wrong method still gets a 405 naming the methods, not a 404.
    """
    app = APIGatewayHttpResolver(enable_validation=True)
    for router in routers:
        app.include_router(router)
    register_error_handlers(app)
    # (method, path pattern) of every route, this function's and the others'. The
    # others' routers are only read: including them would bind them to this resolver.
    known = [(r.method, r.rule) for r in _routes(app)] + [
        (method.upper(), app._compile_regex(key[0]))
        for router in elsewhere
        for key in router._routes
        for method in key[1]
    ]

    @app.not_found
    def not_found(_: Exception) -> Response[str]:
        event = app.current_event
        method = event.http_method.upper()
        # A known path with another method is a 405 (with Allow, RFC 9110), not a 404.
        allowed = sorted({m for m, rule in known if m != method and rule.match(event.path)})
        if allowed:
            error = MethodNotAllowed(method, allowed)
            return error_response(
                405,
                "method_not_allowed",
                str(error),
                headers={"Allow": ", ".join(allowed)},
                allowed=allowed,
            )
        return error_response(404, "not_found", f"no route {method} {event.path}")

    return app


def serve(app: APIGatewayHttpResolver, api: Api, event: dict[str, Any], context: Any) -> Any:
    """Answer one HTTP request: check its body (``signoff.api.body``), then route."""
    route = _route_for(app, event)
    try:
        # Before routing, so no validation or handler ever sees a body it cannot read.
        event = checked_event(event, route, api.max_body_bytes)
    except SignoffError as error:
        return _refusal(route, error)
    app.append_context(api=api)
    return app.resolve(event, context)


def openapi_document(*routers: Router) -> dict[str, Any]:
    """The OpenAPI document of every route, as served at ``/openapi.json``."""
    # Including a router binds it to the resolver that includes it; the document's
    # own resolver is thrown away, so the routers go back to the one serving them.
    serving = [router.api_resolver for router in routers]
    try:
        app = build_resolver(*routers)
        schema: dict[str, Any] = json.loads(
            app.get_openapi_json_schema(
                title=API_TITLE, version=API_VERSION, description=API_DESCRIPTION
            )
        )
    finally:
        for router, resolver in zip(routers, serving, strict=True):
            router.api_resolver = resolver
    # Powertools documents a 422 on every route; its validation errors are our 400s
    # (signoff.api.errors). Only a route's own 422 (an approval's changes) stays.
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.get("responses", {})
            if "HTTPValidationError" in json.dumps(responses.get("422", {})):
                responses.pop("422")
    schemas = schema.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    return schema


def _routes(app: APIGatewayHttpResolver) -> list[Route]:
    return [*app._static_routes, *app._dynamic_routes]


def _route_for(app: APIGatewayHttpResolver, event: dict[str, Any]) -> Route | None:
    """The route the resolver will call for ``event`` (its own matching rule), if any."""
    http = event.get("requestContext", {}).get("http", {})
    method = str(http.get("method", "")).upper()
    path = str(event.get("rawPath") or http.get("path") or "")
    for route in _routes(app):
        if route.method == method and route.rule.match(path):
            return route
    return None


def _refusal(route: Route | None, error: SignoffError) -> dict[str, Any]:
    """The response to a request refused before routing: a page for a page's route, else JSON."""
    from signoff.web import PAGE_HEADERS, error_page

    status, body = error_payload(error)
    if is_page(route):
        page = error_page(status, "This request could not be read", str(body["detail"]))
        headers = {**PAGE_HEADERS, "Content-Type": "text/html; charset=utf-8"}
        return {"statusCode": status, "headers": headers, "body": page, "isBase64Encoded": False}
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }
