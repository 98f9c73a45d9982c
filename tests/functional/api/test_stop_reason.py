"""``stopReason`` of a paused turn: ``pending_approval`` / ``pending_question`` in the 202 body
and in the status route of the paused session, as loopengine's durable approver ends a turn;
every body checked against the schema openapi.json documents for it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from signoff.api.shapes import turn_response
from signoff.durable.results import TurnResult
from tests.conftest import ROOT
from tests.functional.api.test_handlers import pause_refund, with_body
from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas

pytestmark = pytest.mark.usefixtures("lambdas")

DOCUMENT = json.loads((ROOT / "openapi.json").read_text())


def documented(path: str, method: str, status: int, answer: dict[str, Any]) -> dict[str, Any]:
    """``answer``'s body, once it is valid against the route's documented schema."""
    assert answer["statusCode"] == status, answer.get("body")
    content = DOCUMENT["paths"][path][method]["responses"][str(status)]["content"]
    schema = {**content["application/json"]["schema"], "components": DOCUMENT["components"]}
    payload: dict[str, Any] = body(answer)
    errors = [error.message for error in Draft202012Validator(schema).iter_errors(payload)]
    assert errors == [], errors
    return payload


def status_of(lambdas: Lambdas, session_id: str) -> dict[str, Any]:
    answer = lambdas.invoke("resolve", load_event("session_status", SESSION_ID=session_id))
    return documented("/agents/{name}/sessions/{id}", "get", 200, answer)


def test_the_schema_names_the_reasons() -> None:
    schemas = DOCUMENT["components"]["schemas"]
    paused = json.dumps(schemas["PendingBody"]["properties"]["stopReason"])
    assert "pending_approval" in paused and "pending_question" in paused
    status = json.dumps(schemas["SessionStatusBody"]["properties"]["stopReason"])
    assert all(r in status for r in ("max_turns", "denied", "pending_approval", "pending_question"))


def test_an_approval_pause_says_pending_approval_in_the_202_and_the_status_route(
    lambdas: Lambdas,
) -> None:
    paused = pause_refund(lambdas)
    assert paused["stopReason"] == "pending_approval"

    status = status_of(lambdas, paused["sessionId"])
    assert (status["status"], status["stopReason"]) == ("paused", "pending_approval")
    assert status["pending"]["stopReason"] == "pending_approval"

    denied = lambdas.invoke("resolve", load_event("approval_deny", PENDING_ID=paused["id"]))
    assert documented("/approvals/{id}/deny", "post", 200, denied)["stopReason"] == "denied"
    status = status_of(lambdas, paused["sessionId"])
    assert (status["status"], status["stopReason"]) == ("done", "denied")


def test_a_question_pause_says_pending_question_then_its_approval_pending_approval(
    lambdas: Lambdas,
) -> None:
    asked = lambdas.invoke(
        "message", with_body(load_event("message_post"), {"message": "I want my money back"})
    )
    question = documented("/agents/{name}/messages", "post", 202, asked)
    assert (question["type"], question["stopReason"]) == ("question", "pending_question")
    assert status_of(lambdas, question["sessionId"])["stopReason"] == "pending_question"

    answered = lambdas.invoke(
        "resolve",
        with_body(load_event("question_answer", PENDING_ID=question["id"]), {"answer": "A-1002"}),
    )
    approval = documented("/questions/{id}/answer", "post", 202, answered)
    assert (approval["type"], approval["stopReason"]) == ("approval", "pending_approval")
    assert status_of(lambdas, question["sessionId"])["stopReason"] == "pending_approval"

    done = lambdas.invoke("resolve", load_event("approval_approve", PENDING_ID=approval["id"]))
    finished = documented("/approvals/{id}/approve", "post", 200, done)
    assert "stopReason" not in finished, "an answer has none"
    status = status_of(lambdas, question["sessionId"])
    assert status["status"] == "done" and "stopReason" not in status


def test_a_pause_after_a_denied_turn_is_the_pauses_reason(lambdas: Lambdas) -> None:
    first = pause_refund(lambdas)
    lambdas.invoke("resolve", load_event("approval_deny", PENDING_ID=first["id"]))
    again = lambdas.invoke(
        "message",
        with_body(
            load_event("message_post"),
            {"message": "refund order A-1001 please", "sessionId": first["sessionId"]},
        ),
    )
    assert body(again)["stopReason"] == "pending_approval"

    status = status_of(lambdas, first["sessionId"])
    assert (status["status"], status["stopReason"]) == ("paused", "pending_approval")


def test_a_running_202_has_no_stop_reason() -> None:
    code, running = turn_response(TurnResult(status="running", session_id="s-1", agent="a"))

    assert code == 202 and running["type"] == "running" and "stopReason" not in running
