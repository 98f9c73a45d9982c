"""The routes from one source: the routers, the OpenAPI document, template.yaml and events/ agree.

A route the code serves but the template does not declare is a 404 on AWS (API
Gateway never forwards it), and a template route no function serves is the
resolver's "no route"; neither shows on moto unless a test compares the two. The
events/ bodies are what ``sam local invoke`` sends and what the functional tests
load: each must be a body its route's request model accepts.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import pytest
from jsonschema import Draft202012Validator

from signoff.api.spec import MESSAGE_ROUTERS, RESOLVE_ROUTERS, document
from tests.support.aws import load_template
from tests.support.lambdas import EVENTS, Lambdas, load_event
from tests.support.lambdas import lambdas as lambdas

if TYPE_CHECKING:
    from pathlib import Path

    from aws_lambda_powertools.event_handler.api_gateway import Router

Route = tuple[str, str]  # (METHOD, /path/{param})

# What serves the OpenAPI document is left out of it.
DOCUMENT_ROUTE: Route = ("GET", "/openapi.json")
# API Gateway's catch-all route: what no declared route matches.
DEFAULT_ROUTE = "$default"

HTTP_EVENTS = sorted(
    path for path in EVENTS.glob("*.json") if "routeKey" in json.loads(path.read_text())
)
# The events of the document's operations: neither the catch-all nor the document's own.
OPERATION_EVENTS = [
    path
    for path in HTTP_EVENTS
    if json.loads(path.read_text())["routeKey"] not in {DEFAULT_ROUTE, " ".join(DOCUMENT_ROUTE)}
]


def _template_routes() -> dict[str, str]:
    """Route key (``POST /agents/{name}/messages``, ``$default``) → the function's folder."""
    routes: dict[str, str] = {}
    for resource in load_template()["Resources"].values():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        folder = props["CodeUri"].rstrip("/").rsplit("/", 1)[-1]
        for event in props.get("Events", {}).values():
            if event["Type"] != "HttpApi":
                continue
            trigger = event["Properties"]
            if "Path" in trigger or "Method" in trigger:
                key = f"{trigger['Method'].upper()} {trigger['Path']}"
            else:
                key = DEFAULT_ROUTE
            assert key not in routes, f"{key} declared twice"
            routes[key] = folder
    return routes


def _served(routers: tuple[Router, ...]) -> set[Route]:
    """(method, OpenAPI-style path) of every route of ``routers``."""
    return {
        (method.upper(), re.sub(r"<(\w+)>", r"{\1}", rule))
        for router in routers
        for rule, methods, *_ in router._routes
        for method in methods
    }


def _code_routes() -> dict[str, str]:
    """Route key → the function whose routers serve it (``signoff.api.spec``)."""
    routes = {f"{m} {p}": "message" for m, p in _served(MESSAGE_ROUTERS)}
    for method, path in _served(RESOLVE_ROUTERS):
        key = f"{method} {path}"
        assert key not in routes, f"{key} is served by both functions"
        routes[key] = "resolve"
    return routes


def _operations() -> dict[Route, dict[str, Any]]:
    return {
        (method.upper(), path): operation
        for path, operations in document()["paths"].items()
        for method, operation in operations.items()
    }


def test_the_template_declares_exactly_the_routes_each_function_serves() -> None:
    # Given the routes each function's routers serve and the template's HttpApi events
    served, declared = _code_routes(), _template_routes()
    # Then every served route is declared for the function that serves it, and no
    # other route is; what no route matches goes to the resolve function, which
    # answers a known path's wrong method with 405 (its resolver knows the message
    # function's routes too)
    assert declared.pop(DEFAULT_ROUTE) == "resolve"
    assert declared == served


def test_the_openapi_document_lists_every_served_route() -> None:
    # Given the routes both functions serve
    served = {tuple(key.split(" ", 1)) for key in _code_routes()}
    # Then the OpenAPI document has one operation for each (but its own route)
    assert set(_operations()) == served - {DOCUMENT_ROUTE}


def _route_of(sample: dict[str, Any]) -> Route:
    method, path = sample["routeKey"].split(" ", 1)
    return method, path


def _body_of(sample: dict[str, Any], media_type: str) -> Any:
    if media_type == "application/json":
        return json.loads(sample["body"])
    assert media_type == "application/x-www-form-urlencoded", media_type
    return {name: values[-1] for name, values in parse_qs(sample["body"]).items()}


@pytest.mark.parametrize("path", OPERATION_EVENTS, ids=lambda p: p.name)
def test_every_events_body_is_one_its_route_accepts(path: Path) -> None:
    # Given an events/ file for an operation of the OpenAPI document
    sample = json.loads(path.read_text())
    operation = _operations()[_route_of(sample)]
    request = operation.get("requestBody")
    if request is None:
        # Then a route without a request model is sent nothing it would drop
        assert not sample.get("body") or json.loads(sample["body"]) == {}, (
            f"{path.name}: {sample['routeKey']} reads no body, yet the event sends one"
        )
        return
    # Then its body is of a documented media type and valid against that schema
    media_type = sample["headers"]["content-type"].split(";")[0].strip()
    assert media_type in request["content"], f"{path.name}: {media_type} not documented"
    schema = {**request["content"][media_type]["schema"], "components": document()["components"]}
    errors = [
        error.message
        for error in Draft202012Validator(schema).iter_errors(_body_of(sample, media_type))
    ]
    assert errors == [], f"{path.name}: {errors}"


def _no_route(response: dict[str, Any]) -> bool:
    """True when the resolver found no route for the request (404 or 405 before any handler)."""
    if response["statusCode"] not in (404, 405):
        return False
    payload = json.loads(response["body"])
    detail = str(payload.get("detail", ""))
    return payload.get("error") == "method_not_allowed" or detail.startswith("no route")


def test_each_events_request_reaches_a_handler_only_in_its_templates_function(
    lambdas: Lambdas,
) -> None:
    # Given the function the template routes each declared route to
    declared = _template_routes()
    del declared[DEFAULT_ROUTE]
    events = {json.loads(path.read_text())["routeKey"]: path.stem for path in HTTP_EVENTS}
    for key, folder in sorted(declared.items()):
        # When the route's events/ request goes to that function, and to the other one
        response = lambdas.invoke(folder, load_event(events[key]))
        elsewhere = lambdas.invoke(
            "resolve" if folder == "message" else "message", load_event(events[key])
        )
        # Then the function the template names has a handler for it, the other has none
        assert not _no_route(response), f"{key}: {folder} has no route for it: {response}"
        assert _no_route(elsewhere), f"{key}: served by the other function too: {elsewhere}"
