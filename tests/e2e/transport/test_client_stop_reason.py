"""``signoff.client``'s ``Turn.stop_reason`` on the local stack, over SSE and long-poll: while
the turn waits on a person, ``pending_approval`` / ``pending_question`` — what the 202 body and
the status route say — and at its end ``done``'s (``denied``; None for an answer)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.e2e.transport.test_transport_conformance import ANSWER, ASKS, QUESTION, client_for
from tests.e2e.transport.test_transport_conformance import agents as agents
from tests.e2e.transport.test_transport_conformance import http as http
from tests.e2e.transport.test_transport_conformance import stack as stack

if TYPE_CHECKING:
    import httpx

    from signoff.client import Transport
    from signoff_dev.local.stack import LocalStack


@pytest.mark.parametrize("transport", ["sse", "poll"])
@pytest.mark.parametrize(
    ("message", "decide", "paused", "ended"),
    [
        (ASKS, "approve", ["pending_approval"], None),
        (ASKS, "deny", ["pending_approval"], "denied"),
        (QUESTION, "answer", ["pending_question"], None),
    ],
    ids=["approved", "denied", "question"],
)
def test_the_clients_turn_says_why_it_stopped(
    stack: LocalStack,
    http: httpx.Client,
    transport: Transport,
    message: str,
    decide: str,
    paused: list[str],
    ended: str | None,
) -> None:
    seen: list[str | None] = []
    with client_for(stack, transport) as client:
        turn = client.send("shop", message)
        for _ in turn:
            pending = turn.pending
            if pending is None:
                continue
            seen.append(turn.stop_reason)
            # the server says the same of the paused session
            status = http.get(f"/agents/shop/sessions/{turn.session_id}").json()
            assert (status["status"], status["stopReason"]) == ("paused", turn.stop_reason)
            if pending.event.type == "question:pending":
                pending.answer(ANSWER)
            elif decide == "deny":
                pending.deny("not this one")
            else:
                pending.approve()
    assert seen == paused
    assert turn.done is not None and turn.stop_reason == ended


def test_the_plain_routes_202_says_pending_approval(http: httpx.Client) -> None:
    answer = http.post("/agents/shop/messages", json={"message": ASKS})

    assert answer.status_code == 202
    assert answer.json()["stopReason"] == "pending_approval"
