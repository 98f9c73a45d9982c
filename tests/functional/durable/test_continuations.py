"""The message function's continuation event (events/continue_turn.json) for a
session with nothing to continue: an answer, not an error, so Lambda's
asynchronous invocation does not retry it; one structured log line says why."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.usefixtures("lambdas")


@pytest.fixture
def structured(lambdas: Lambdas) -> Iterator[io.StringIO]:
    """The functions' JSON log lines (Powertools' handler on the service logger)."""
    handler = lambdas.message.logger.registered_handler
    lines = io.StringIO()
    previous = handler.setStream(lines)
    try:
        yield lines
    finally:
        handler.setStream(previous)


def skipped_lines(lines: io.StringIO) -> list[dict[str, Any]]:
    logged = [json.loads(line) for line in lines.getvalue().splitlines() if line]
    return [line for line in logged if line["message"].startswith("continuation skipped")]


def stored(lambdas: Lambdas, session_id: str, pending_id: str) -> tuple[Any, ...]:
    api = lambdas.api
    chunks = [chunk.model_dump() for chunk in api.turns.sessions.read_log(session_id)]
    return (
        api.turns.sessions.load(session_id),
        chunks,
        api.pending.get(pending_id),
        api.turns.audit.for_subject(session_id),
    )


def pause_refund(lambdas: Lambdas) -> dict[str, Any]:
    response = lambdas.invoke("message", load_event("message_post"))
    assert response["statusCode"] == 202, response
    paused: dict[str, Any] = body(response)
    assert paused["type"] == "approval"
    return paused


def test_a_continuation_for_a_done_session_is_a_logged_no_op(
    lambdas: Lambdas, structured: io.StringIO
) -> None:
    paused = pause_refund(lambdas)
    done = lambdas.invoke("resolve", load_event("approval_approve", PENDING_ID=paused["id"]))
    assert done["statusCode"] == 200, done["body"]
    session_id = paused["sessionId"]
    before = stored(lambdas, session_id, paused["id"])
    assert before[0].status == "done"

    outcome = lambdas.invoke("message", load_event("continue_turn", SESSION_ID=session_id))

    assert outcome == {"sessionId": session_id, "status": "skipped", "sessionStatus": "done"}
    assert stored(lambdas, session_id, paused["id"]) == before
    assert lambdas.continuations.drain() == []
    (line,) = skipped_lines(structured)
    assert (line["level"], line["session_id"], line["session_status"]) == (
        "INFO",
        session_id,
        "done",
    )
    assert line["agent"] == "customer-service"


def test_a_continuation_for_a_session_waiting_on_a_person_is_a_logged_no_op(
    lambdas: Lambdas, structured: io.StringIO
) -> None:
    paused = pause_refund(lambdas)
    session_id = paused["sessionId"]
    before = stored(lambdas, session_id, paused["id"])

    outcome = lambdas.invoke("message", load_event("continue_turn", SESSION_ID=session_id))

    assert outcome == {"sessionId": session_id, "status": "skipped", "sessionStatus": "paused"}
    assert stored(lambdas, session_id, paused["id"]) == before
    assert lambdas.api.pending.get(paused["id"]).status == "pending"
    (line,) = skipped_lines(structured)
    assert (line["session_id"], line["session_status"], line["pending_id"]) == (
        session_id,
        "paused",
        paused["id"],
    )
