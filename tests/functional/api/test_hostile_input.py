"""Hostile requests to both HTTP functions: a clear 4xx with the error shape, never a 500,
never a changed state (the handlers driven by events/ files, on moto)."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from tests.functional.api.test_handlers import link_token, pause_refund
from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.usefixtures("lambdas")

NOT_UTF8 = b'{"message": "caf\xe9", "answer": "caf\xe9", "decision": "approve"}'
DEEP = "[" * 5000 + "]" * 5000
LONG_NUMBER = "9" * 5000


def raw(event: dict[str, Any], data: bytes, content_type: str | None = "keep") -> dict[str, Any]:
    """``event`` with ``data`` as its body, sent base64-encoded as API Gateway sends bytes."""
    event = json.loads(json.dumps(event))
    event["body"] = base64.b64encode(data).decode()
    event["isBase64Encoded"] = True
    return typed(event, content_type)


def text(event: dict[str, Any], data: str, content_type: str | None = "keep") -> dict[str, Any]:
    event = json.loads(json.dumps(event))
    event["body"] = data
    event["isBase64Encoded"] = False
    return typed(event, content_type)


def typed(event: dict[str, Any], content_type: str | None) -> dict[str, Any]:
    if content_type is None:
        event["headers"].pop("content-type", None)
    elif content_type != "keep":
        event["headers"]["content-type"] = content_type
    return event


def method(event: dict[str, Any], verb: str) -> dict[str, Any]:
    event = json.loads(json.dumps(event))
    event["requestContext"]["http"]["method"] = verb
    event["routeKey"] = "$default"
    return event


MESSAGE = load_event("message_post")
# (case, the request, the status, the Allow header of a 405)
MESSAGE_CASES: list[tuple[str, dict[str, Any], int, str | None]] = [
    ("not UTF-8", raw(MESSAGE, NOT_UTF8), 400, None),
    ("base64 that does not decode", {**MESSAGE, "body": "%%%", "isBase64Encoded": True}, 400, None),
    ("JSON nested 5,000 deep", text(MESSAGE, f'{{"message": "hi", "x": {DEEP}}}'), 400, None),
    ("a 5,000-digit number", text(MESSAGE, f'{{"message": "hi", "x": {LONG_NUMBER}}}'), 400, None),
    ("NaN", text(MESSAGE, '{"message": "hi", "x": NaN}'), 400, None),
    ("text/plain", typed(MESSAGE, "text/plain"), 415, None),
    ("application/octet-stream", typed(MESSAGE, "application/octet-stream"), 415, None),
    ("multipart without a boundary", typed(MESSAGE, "multipart/form-data"), 415, None),
    ("no content type", typed(MESSAGE, None), 415, None),
    ("GET on the POST route", method(MESSAGE, "GET"), 405, "POST"),
]


@pytest.mark.parametrize(
    ("request_", "status", "allow"),
    [case[1:] for case in MESSAGE_CASES],
    ids=[case[0] for case in MESSAGE_CASES],
)
def test_hostile_messages_get_a_4xx_and_start_no_turn(
    lambdas: Lambdas, request_: dict[str, Any], status: int, allow: str | None
) -> None:
    before = stored_items(lambdas)
    response = lambdas.invoke("message", request_)
    assert response["statusCode"] == status, response["body"]
    assert response["headers"]["Content-Type"] == "application/json"
    assert set(body(response)) >= {"error", "detail"}
    assert response["headers"].get("Allow") == allow
    assert stored_items(lambdas) == before, "no session, log or pending item was written"
    assert lambdas.continuations.drain() == [], "no turn was started or continued"


def stored_items(lambdas: Lambdas) -> int:
    """How many items the deployment's table holds (every turn writes some)."""
    table = lambdas.resources.tables["SignoffTable"]
    count: int = boto3.client("dynamodb").scan(TableName=table, Select="COUNT")["Count"]
    return count


def resolve_cases(
    pending_id: str, token: str
) -> list[tuple[str, dict[str, Any], int, str, str | None]]:
    """(case, request, status, content type, Allow) for the resolve function's routes."""
    approve = load_event("approval_approve", PENDING_ID=pending_id)
    resolve = load_event("pending_approval_resolve", PENDING_ID=pending_id)
    answer = load_event("question_answer", PENDING_ID=pending_id)
    link = load_event("link_post", TOKEN=token)
    slack = load_event("slack_interaction", PENDING_ID=pending_id)
    lark = load_event("lark_callback", PENDING_ID=pending_id)
    json_type, html = "application/json", "text/html; charset=utf-8"
    return [
        ("approve, not UTF-8", raw(approve, NOT_UTF8, json_type), 400, json_type, None),
        ("approve, text/plain", text(approve, "approve", "text/plain"), 415, json_type, None),
        ("resolve, not UTF-8", raw(resolve, NOT_UTF8), 400, json_type, None),
        (
            "resolve, a 5,000-digit note",
            text(resolve, f'{{"decision": "approve", "note": {LONG_NUMBER}}}'),
            400,
            json_type,
            None,
        ),
        ("resolve, nested 5,000 deep", text(resolve, DEEP), 400, json_type, None),
        ("resolve, octet-stream", typed(resolve, "application/octet-stream"), 415, json_type, None),
        ("answer, not UTF-8", raw(answer, NOT_UTF8), 400, json_type, None),
        ("answer, text/plain", typed(answer, "text/plain"), 415, json_type, None),
        ("link form, not UTF-8", raw(link, b"decision=approve&x=\xff"), 400, html, None),
        ("link form, text/plain", typed(link, "text/plain"), 415, html, None),
        ("slack, not UTF-8", raw(slack, b"payload=\xff"), 400, json_type, None),
        (
            "slack, base64 that does not decode",
            {**slack, "isBase64Encoded": True},
            400,
            json_type,
            None,
        ),
        ("lark, not UTF-8", raw(lark, b'{"token": "\xff"}'), 400, json_type, None),
        ("lark, nested 5,000 deep", text(lark, DEEP), 400, json_type, None),
        ("lark, text/plain", typed(lark, "text/plain"), 415, json_type, None),
        ("GET on the approve route", method(approve, "GET"), 405, json_type, "POST"),
        ("DELETE on the link", method(link, "DELETE"), 405, json_type, "GET, POST"),
        # API Gateway's $default route sends the message route's wrong methods here.
        ("GET on the message route", method(MESSAGE, "GET"), 405, json_type, "POST"),
    ]


@pytest.mark.parametrize("case", range(len(resolve_cases("p", "t"))))
def test_hostile_decisions_get_a_4xx_and_decide_nothing(lambdas: Lambdas, case: int) -> None:
    paused = pause_refund(lambdas)
    token = link_token(lambdas, paused["id"])
    name, request_, status, content_type, allow = resolve_cases(paused["id"], token)[case]
    response = lambdas.invoke("resolve", request_)
    assert response["statusCode"] == status, (name, response["body"][:300])
    assert response["headers"]["Content-Type"] == content_type, name
    assert response["headers"].get("Allow") == allow, name
    if content_type == "application/json":
        assert set(body(response)) >= {"error", "detail"}, name
    else:
        assert f"Error {status}" in response["body"], name
    assert lambdas.api.pending.get(paused["id"]).status == "pending", name
    assert lambdas.continuations.drain() == [], name


HEADS: list[tuple[str, Callable[[], dict[str, Any]], str]] = [
    ("HEAD /agents", lambda: method(load_event("agents_list"), "HEAD"), "GET"),
    ("PUT /openapi.json", lambda: method(load_event("openapi_get"), "PUT"), "GET"),
]


@pytest.mark.parametrize(("name", "request_", "allow"), HEADS, ids=[h[0] for h in HEADS])
def test_a_wrong_method_is_405_with_allow(
    lambdas: Lambdas, name: str, request_: Callable[[], dict[str, Any]], allow: str
) -> None:
    response = lambdas.invoke("resolve", request_())
    assert response["statusCode"] == 405, name
    assert response["headers"]["Allow"] == allow
    assert body(response)["error"] == "method_not_allowed"


def test_the_default_route_answers_the_message_routes_wrong_method(lambdas: Lambdas) -> None:
    # Given what API Gateway's $default route sends the resolve function: a path the
    # message function serves, with another method
    response = lambdas.invoke("resolve", load_event("unmatched_route"))
    # Then it is a 405 naming the method that path takes, not a 404
    assert response["statusCode"] == 405
    assert response["headers"]["Allow"] == "POST"
    assert body(response)["allowed"] == ["POST"]


LONG = "A" * 3000
OVERSIZED = [
    ("session", lambda: load_event("session_status", SESSION_ID=LONG), "application/json"),
    ("approve", lambda: load_event("approval_approve", PENDING_ID=LONG), "application/json"),
    ("link", lambda: load_event("link_get", TOKEN=LONG), "text/html; charset=utf-8"),
]


@pytest.mark.parametrize(
    ("request_", "content_type"), [o[1:] for o in OVERSIZED], ids=[o[0] for o in OVERSIZED]
)
def test_a_path_segment_longer_than_any_id_is_404_before_any_lookup(
    lambdas: Lambdas, request_: Callable[[], dict[str, Any]], content_type: str
) -> None:
    # DynamoDB refuses keys over 2,048 bytes (a 503 on AWS; moto does not check)
    response = lambdas.invoke("resolve", request_())
    assert response["statusCode"] == 404
    assert response["headers"]["Content-Type"] == content_type
