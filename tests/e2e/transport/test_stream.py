"""The SSE transport on the local stack (``POST /agents/{name}/messages/stream``), over real
HTTP on loopback: its framing, its parity with the plain response, and an ``ask`` that stays
live on the open stream while the approval route resolves it.
"""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import validate_event
from tests.support.local_stack import (
    REFUND,
    WAIT,
    pending_item,
)
from tests.support.local_stack import (
    http as http,
)
from tests.support.local_stack import (
    stack as stack,
)
from tests.support.sse import sse_events

if TYPE_CHECKING:
    import httpx

    from signoff_dev.local.stack import LocalStack

STREAM = "/agents/customer-service/messages/stream"
PLAIN = "/agents/customer-service/messages"
TRACKING = "where is order A-1001?"
# Differ between two runs of the same scripted turn: the pending item's id, when it was asked.
RUN_SPECIFIC = ("requestedAt",)


def streamed(http: httpx.Client, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every event of one streamed turn, each validated against the protocol's schema."""
    with http.stream("POST", STREAM, json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        events = list(sse_events(response.iter_lines()))
    for event in events:
        validate_event(event)
    return events


def comparable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with what differs between runs replaced by placeholders (in order of use)."""
    pending_ids: dict[str, str] = {}
    stable = []
    for event in events:
        event = {k: v for k, v in event.items() if k not in RUN_SPECIFIC}
        if event["type"] == "approval:pending":
            event["id"] = pending_ids.setdefault(event["id"], f"pending-{len(pending_ids)}")
        stable.append(event)
    return stable


def test_a_finished_turn_streams_session_first_done_last_and_the_plain_events_between(
    http: httpx.Client,
) -> None:
    events = streamed(http, {"message": TRACKING})
    plain = http.post(PLAIN, json={"message": TRACKING})
    assert plain.status_code == 200, plain.text

    assert events[0] == {"type": "session", "sessionId": events[0]["sessionId"]}
    assert events[-1] == {"type": "done", "text": plain.json()["text"]}
    assert [e["type"] for e in events].count("done") == 1
    assert events[1:-1] == plain.json()["events"]
    assert events[-2]["type"] == "loop:done"


def test_an_approval_is_live_on_the_open_stream_and_the_stream_goes_on_to_done(
    stack: LocalStack, http: httpx.Client
) -> None:
    arrived: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read() -> None:
        try:
            with http.stream("POST", STREAM, json={"message": REFUND}) as response:
                assert response.status_code == 200
                for event in sse_events(response.iter_lines()):
                    arrived.put(event)
        finally:
            arrived.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    events: list[dict[str, Any]] = []

    def next_event() -> dict[str, Any] | None:
        event = arrived.get(timeout=WAIT)
        if event is not None:
            validate_event(event)
            events.append(event)
        return event

    while (event := next_event()) is not None and event["type"] != "approval:pending":
        pass
    assert event is not None, f"the stream ended without asking: {events}"
    assert event["tool"] == "issue_refund" and event["scope"]["environment"] == "production"
    # The stream stays open while the item waits: nothing more arrives, the turn is paused.
    with pytest.raises(queue.Empty):
        arrived.get(timeout=0.5)
    assert reader.is_alive()
    assert pending_item(stack, event["id"])["status"]["S"] == "pending"

    approved = http.post(f"/approvals/{event['id']}/approve", json={})
    assert approved.status_code == 200, approved.text
    while next_event() is not None:
        pass
    reader.join(WAIT)

    assert [e["type"] for e in events].count("approval:pending") == 1
    assert events[0]["type"] == "session" and events[-1] == {
        "type": "done",
        "text": approved.json()["text"],
    }
    assert events[1:-1] == approved.json()["events"]
    results = [e for e in events if e["type"] == "tool:result" and e["tool"] == "issue_refund"]
    assert [r["statusText"] for r in results] == ["Approved."]
    again = http.post(f"/approvals/{event['id']}/approve", json={})
    assert again.status_code == 409 and again.json()["current"]["status"] == "approved"


def test_the_stream_and_the_plain_route_carry_the_same_events_through_an_approval(
    http: httpx.Client,
) -> None:
    plain = http.post(PLAIN, json={"message": REFUND})
    assert plain.status_code == 202, plain.text
    plain_done = http.post(plain.json()["approveUrl"], json={})
    assert plain_done.status_code == 200, plain_done.text

    events: list[dict[str, Any]] = []
    with http.stream("POST", STREAM, json={"message": REFUND}) as response:
        for event in sse_events(response.iter_lines()):
            events.append(event)
            if event["type"] == "approval:pending":
                assert http.post(f"/approvals/{event['id']}/approve", json={}).status_code == 200

    assert comparable(events[1:-1]) == comparable(plain_done.json()["events"])
    assert events[-1] == {"type": "done", "text": plain_done.json()["text"]}


def test_a_question_on_the_stream_is_answered_through_the_answer_route(
    http: httpx.Client,
) -> None:
    events: list[dict[str, Any]] = []
    with http.stream("POST", STREAM, json={"message": "I want my money back"}) as response:
        for event in sse_events(response.iter_lines()):
            events.append(event)
            if event["type"] == "question:pending":
                assert event["options"] == ["A-1001", "A-1002"]
                answered = http.post(f"/questions/{event['id']}/answer", json={"answer": "A-1002"})
                assert answered.status_code == 202, answered.text  # now the refund's approval
            if event["type"] == "approval:pending":
                assert event["args"]["orderId"] == "A-1002"
                assert http.post(f"/approvals/{event['id']}/deny", json={}).status_code == 200
    kinds = [e["type"] for e in events]
    assert kinds.index("question:pending") < kinds.index("approval:pending")
    assert events[-1]["type"] == "done" and events[-1]["stopReason"] == "denied"


def test_a_follow_up_message_streams_on_the_same_session(http: httpx.Client) -> None:
    first = streamed(http, {"message": TRACKING})
    session = first[0]["sessionId"]
    second = streamed(http, {"message": TRACKING, "sessionId": session})
    assert second[0] == {"type": "session", "sessionId": session}
    # Only the new turn's events: the first turn's are not replayed.
    assert [e["type"] for e in second] == [e["type"] for e in first]


@pytest.mark.parametrize(
    ("path", "content", "headers", "status", "error"),
    [
        ("/agents/nobody/messages/stream", b'{"message": "hi"}', {}, 404, "not_found"),
        (STREAM, b'{"message": ', {}, 400, "bad_request"),
        (STREAM, b'{"text": "no message field"}', {}, 400, "bad_request"),
        (STREAM, b'{"message": "hi"}', {"x-api-key": "sk_not_a_key"}, 401, "unauthorized"),
        (STREAM, b'{"message": "' + b"x" * 300_000 + b'"}', {}, 413, "payload_too_large"),
    ],
)
def test_a_request_refused_before_the_stream_gets_the_apis_json_error(
    http: httpx.Client,
    path: str,
    content: bytes,
    headers: dict[str, str],
    status: int,
    error: str,
) -> None:
    sent = {"content-type": "application/json", **headers}
    response = http.post(path, content=content, headers=sent)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"] == error and response.json()["detail"]


def test_a_session_waiting_on_a_decision_refuses_a_stream_with_409(http: httpx.Client) -> None:
    paused = http.post(PLAIN, json={"message": REFUND}).json()
    busy = http.post(STREAM, json={"message": TRACKING, "sessionId": paused["sessionId"]})
    assert busy.status_code == 409, busy.text
    assert busy.json()["pendingId"] == paused["id"]


def test_the_playground_and_its_assets_are_served_with_a_strict_policy(
    http: httpx.Client,
) -> None:
    page = http.get("/playground")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    for asset, kind in (("/playground.js", "text/javascript"), ("/playground.css", "text/css")):
        served = http.get(asset)
        assert served.status_code == 200 and served.headers["content-type"].startswith(kind)
        assert asset in page.text
