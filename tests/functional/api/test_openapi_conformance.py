"""openapi.json says what each route answers: a table of good and bad requests per route,
each answered with a status the document lists for that route and method, a documented
content type, and a body valid against the documented schema (the handlers, on moto)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import Draft202012Validator

from signoff.keys.api_keys import new_api_key
from tests.conftest import ROOT
from tests.functional.api.test_handlers import link_token, pause_refund, with_body, with_path
from tests.support.lambdas import Lambdas, load_event
from tests.support.lambdas import lambdas as lambdas

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.usefixtures("lambdas")

DOCUMENT = json.loads((ROOT / "openapi.json").read_text())


def keyed(event: dict[str, Any], key: str) -> dict[str, Any]:
    event = json.loads(json.dumps(event))
    event["headers"]["x-api-key"] = key
    return event


def typed(event: dict[str, Any], content_type: str) -> dict[str, Any]:
    event = json.loads(json.dumps(event))
    event["headers"]["content-type"] = content_type
    return event


def query(event: dict[str, Any], **values: str) -> dict[str, Any]:
    event = json.loads(json.dumps(event))
    event["queryStringParameters"] = values
    event["rawQueryString"] = "&".join(f"{k}={v}" for k, v in values.items())
    return event


def twice(event: dict[str, Any], **values: tuple[str, str]) -> dict[str, Any]:
    """``event`` with each query parameter given twice (API Gateway joins them with ',')."""
    event = json.loads(json.dumps(event))
    event["queryStringParameters"] = {k: ",".join(v) for k, v in values.items()}
    event["rawQueryString"] = "&".join(f"{k}={one}" for k, v in values.items() for one in v)
    return event


class World:
    """What the requests of the table name: a paused item, its token, its session."""

    def __init__(self, lambdas: Lambdas) -> None:
        self.lambdas = lambdas
        paused = pause_refund(lambdas)
        self.pending_id: str = paused["id"]
        self.session_id: str = paused["sessionId"]
        self.token = link_token(lambdas, self.pending_id)
        self.expired_token = link_token(lambdas, self.pending_id, expires_in=-60)
        clear, record = new_api_key("another-tenant", "conformance", time.time())
        lambdas.api.api_keys.add(record)
        self.other_tenant_key = clear
        later = time.time() + 3600
        self.inbox_token = lambdas.api.signer.issue_inbox("default", "alice@example.com", later)
        self.other_inbox = lambdas.api.signer.issue_inbox("another-tenant", "bob", later)


# (route, method, function, the request given the world); every documented route appears.
Case = tuple[str, str, str, "Callable[[World], dict[str, Any]]"]
MESSAGES, APPROVE = "/agents/{name}/messages", "/approvals/{id}/approve"
DENY, ANSWER = "/approvals/{id}/deny", "/questions/{id}/answer"
RESOLVE, PENDING_ANSWER = "/pending-approvals/{id}/resolve", "/pending-questions/{id}/answer"
LINK, AGENTS = "/a/{token}", "/agents"
CONFIG, SESSION = "/agents/{name}/config", "/agents/{name}/sessions/{id}"
CONFIG_PAGE = "/agents/config"
SLACK, LARK = "/slack/interactions", "/lark/callback"
INBOX, CARD = "/inbox", "/inbox/items/{id}"
AUDIT_JSON, AUDIT_CSV = "/inbox/audit.json", "/inbox/audit.csv"
CASES: list[Case] = [
    (MESSAGES, "post", "message", lambda w: load_event("message_post")),
    (MESSAGES, "post", "message", lambda w: with_body(load_event("message_post"), "{")),
    (MESSAGES, "post", "message", lambda w: keyed(load_event("message_post"), "sk_bogus")),
    (
        MESSAGES,
        "post",
        "message",
        lambda w: with_path(load_event("message_post"), "/agents/nobody/messages", name="nobody"),
    ),
    (
        MESSAGES,
        "post",
        "message",
        lambda w: with_body(
            load_event("message_post"), {"message": "hi", "sessionId": w.session_id}
        ),
    ),
    (MESSAGES, "post", "message", lambda w: typed(load_event("message_post"), "text/plain")),
    (
        MESSAGES,
        "post",
        "message",
        lambda w: with_body(load_event("message_post"), {"message": "x" * 300_000}),
    ),
    (APPROVE, "post", "resolve", lambda w: load_event("approval_approve", PENDING_ID="nope")),
    (
        APPROVE,
        "post",
        "resolve",
        lambda w: keyed(load_event("approval_approve", PENDING_ID=w.pending_id), "sk_bogus"),
    ),
    (
        APPROVE,
        "post",
        "resolve",
        lambda w: keyed(
            load_event("approval_approve", PENDING_ID=w.pending_id), w.other_tenant_key
        ),
    ),
    (
        APPROVE,
        "post",
        "resolve",
        lambda w: query(
            load_event("approval_approve", PENDING_ID=w.pending_id), token=w.expired_token
        ),
    ),
    (APPROVE, "post", "resolve", lambda w: load_event("approval_approve", PENDING_ID=w.pending_id)),
    (DENY, "post", "resolve", lambda w: load_event("approval_deny", PENDING_ID=w.pending_id)),
    (
        DENY,
        "post",
        "resolve",
        lambda w: typed(load_event("approval_deny", PENDING_ID=w.pending_id), "text/plain"),
    ),
    (ANSWER, "post", "resolve", lambda w: load_event("question_answer", PENDING_ID="nope")),
    (
        ANSWER,
        "post",
        "resolve",
        lambda w: with_body(load_event("question_answer", PENDING_ID="nope"), {"answer": ""}),
    ),
    (RESOLVE, "post", "resolve", lambda w: load_event("pending_approval_resolve", PENDING_ID="x")),
    (
        RESOLVE,
        "post",
        "resolve",
        lambda w: with_body(
            load_event("pending_approval_resolve", PENDING_ID=w.pending_id), {"decision": "maybe"}
        ),
    ),
    (
        PENDING_ANSWER,
        "post",
        "resolve",
        lambda w: load_event("pending_question_answer", PENDING_ID=w.pending_id),
    ),
    (
        PENDING_ANSWER,
        "post",
        "resolve",
        lambda w: typed(load_event("pending_question_answer", PENDING_ID="x"), "text/plain"),
    ),
    (LINK, "get", "resolve", lambda w: load_event("link_get", TOKEN=w.token)),
    (LINK, "get", "resolve", lambda w: load_event("link_get", TOKEN="forged")),
    (LINK, "get", "resolve", lambda w: load_event("link_get", TOKEN=w.expired_token)),
    (LINK, "post", "resolve", lambda w: load_event("link_post", TOKEN="forged")),
    (
        LINK,
        "post",
        "resolve",
        lambda w: with_body(load_event("link_post", TOKEN=w.token), "decision=maybe"),
    ),
    (
        LINK,
        "post",
        "resolve",
        lambda w: typed(load_event("link_post", TOKEN=w.token), "text/plain"),
    ),
    (LINK, "post", "resolve", lambda w: load_event("link_post", TOKEN=w.token)),
    (LINK, "post", "resolve", lambda w: load_event("link_post", TOKEN=w.token)),  # once more: 409
    (AGENTS, "get", "resolve", lambda w: load_event("agents_list")),
    (AGENTS, "get", "resolve", lambda w: keyed(load_event("agents_list"), "sk_bogus")),
    (CONFIG, "get", "resolve", lambda w: load_event("agent_config")),
    (
        CONFIG,
        "get",
        "resolve",
        lambda w: with_path(load_event("agent_config"), "/agents/nobody/config", name="nobody"),
    ),
    (CONFIG_PAGE, "get", "resolve", lambda w: load_event("agent_config_page")),
    (CONFIG_PAGE, "get", "resolve", lambda w: query(load_event("agent_config_page"))),
    (CONFIG_PAGE, "get", "resolve", lambda w: query(load_event("agent_config_page"), agent="x")),
    (CONFIG_PAGE, "get", "resolve", lambda w: keyed(load_event("agent_config_page"), "sk_bogus")),
    (
        CONFIG_PAGE,
        "get",
        "resolve",
        lambda w: twice(load_event("agent_config_page"), agent=("a", "b")),
    ),
    (SESSION, "get", "resolve", lambda w: load_event("session_status", SESSION_ID=w.session_id)),
    (SESSION, "get", "resolve", lambda w: load_event("session_status", SESSION_ID="nope")),
    (
        SESSION,
        "get",
        "resolve",
        lambda w: query(load_event("session_status", SESSION_ID=w.session_id), after="-1"),
    ),
    (SLACK, "post", "resolve", lambda w: load_event("slack_interaction", PENDING_ID=w.pending_id)),
    (SLACK, "post", "resolve", lambda w: typed(load_event("slack_interaction"), "text/plain")),
    (LARK, "post", "resolve", lambda w: load_event("lark_callback", PENDING_ID=w.pending_id)),
    (LARK, "post", "resolve", lambda w: with_body(load_event("lark_callback"), "[")),
    (INBOX, "get", "resolve", lambda w: load_event("inbox_get")),
    (INBOX, "get", "resolve", lambda w: keyed(load_event("inbox_get"), "sk_bogus")),
    (INBOX, "get", "resolve", lambda w: query(load_event("inbox_get"), limit="0")),
    (INBOX, "get", "resolve", lambda w: query(load_event("inbox_get"), token="forged")),
    (INBOX, "get", "resolve", lambda w: query(load_event("inbox_get"), token=w.inbox_token)),
    (AUDIT_JSON, "get", "resolve", lambda w: load_event("inbox_audit_json")),
    (AUDIT_JSON, "get", "resolve", lambda w: query(load_event("inbox_audit_json"), cursor="x")),
    (AUDIT_CSV, "get", "resolve", lambda w: load_event("inbox_audit_csv")),
    (AUDIT_CSV, "get", "resolve", lambda w: keyed(load_event("inbox_audit_csv"), "sk_bogus")),
    (
        CARD,
        "get",
        "resolve",
        lambda w: load_event("inbox_card_get", PENDING_ID=w.pending_id, INBOX_TOKEN=w.inbox_token),
    ),
    (
        CARD,
        "get",
        "resolve",
        lambda w: load_event("inbox_card_get", PENDING_ID=w.pending_id, INBOX_TOKEN=w.other_inbox),
    ),
    (
        CARD,
        "get",
        "resolve",
        lambda w: load_event("inbox_card_get", PENDING_ID=w.pending_id, INBOX_TOKEN="forged"),
    ),
    (
        CARD,
        "post",
        "resolve",
        lambda w: load_event("inbox_card_post", PENDING_ID=w.pending_id, INBOX_TOKEN="forged"),
    ),
    (
        CARD,
        "post",
        "resolve",
        lambda w: load_event("inbox_card_post", PENDING_ID=w.pending_id, INBOX_TOKEN=w.inbox_token),
    ),
]


def test_the_table_covers_every_documented_operation() -> None:
    documented = {(path, method) for path, ops in DOCUMENT["paths"].items() for method in ops}
    assert {(path, method) for path, method, _, _ in CASES} == documented


def test_every_answer_is_documented_for_its_route(lambdas: Lambdas) -> None:
    # Given one paused refund the requests refer to
    world = World(lambdas)
    seen: dict[tuple[str, str], set[int]] = {}
    for path, method, function, build in CASES:
        # When each request of the table is sent, in order
        response = lambdas.invoke(function, build(world))
        status = response["statusCode"]
        seen.setdefault((path, method), set()).add(status)
        # Then its status is one the document lists for that route and method
        documented = DOCUMENT["paths"][path][method]["responses"]
        assert str(status) in documented, (method, path, status, response.get("body", "")[:200])
        # And its content type and body are the documented ones
        content = documented[str(status)]["content"]
        content_type = response["headers"]["Content-Type"].split(";")[0]
        assert content_type in content, (method, path, status, content_type)
        if content_type == "application/json":
            schema = {**content[content_type]["schema"], "components": DOCUMENT["components"]}
            errors = list(Draft202012Validator(schema).iter_errors(json.loads(response["body"])))
            assert not errors, (method, path, status, errors[0].message)
    # And the table reached every documented status it can reach without a chat service
    # or a busy turn: each route answered with more than one of them
    assert [route for route, statuses in seen.items() if len(statuses) < 2] == [], seen
