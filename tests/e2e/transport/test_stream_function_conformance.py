"""The stream function's server carries what the local stack's stream carries, turn for turn.

``signoff.api.stream_server`` (what the deployed stream function's ``run.sh``
starts behind the Lambda Web Adapter) is served here over the local stack's
services (the message function's ``Api``), on a port of its own, as a function
URL beside the HTTP API; approvals and answers go to the stack's routes, as a
client of a deployed stack sends them to the HTTP API. Each scripted turn of
the conformance suite (finished, approval approved, approval denied, question
answered, a batch, a failing model) yields the same events on both streams, and
``signoff.client`` given the server as its ``stream_url`` yields the events it
yields with one base URL.
"""

from __future__ import annotations

import socket
import threading
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from signoff.api.stream_server import make_server
from signoff.client import Client
from tests.e2e.transport.test_transport_conformance import (
    ANSWER,
    ASKS,
    BATCH,
    FAILS,
    FINISHES,
    QUESTION,
    NoStream,
    client_for,
    per_run,
    signoff,
    sse,
    validated,
    via_client,
)
from tests.e2e.transport.test_transport_conformance import agents as agents
from tests.e2e.transport.test_transport_conformance import http as http
from tests.e2e.transport.test_transport_conformance import stack as stack
from tests.support.local_stack import WAIT
from tests.support.sse import sse_events

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from signoff_dev.local.stack import LocalStack


@pytest.fixture(scope="module")
def function_url(stack: LocalStack) -> Iterator[str]:
    """The stream function's server over the stack's services: its base URL."""
    stopping = threading.Event()
    server = make_server(
        stack.message_api, host="127.0.0.1", port=0, max_body=256 * 1024, stopping=stopping
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def streamed(
    function_url: str, api: httpx.Client, agent: str, message: str, decide: str
) -> list[dict[str, Any]]:
    """The stream function's stream, deciding (``decide``) or answering on the API's routes."""
    events: list[dict[str, Any]] = []
    with (
        httpx.Client(base_url=function_url, timeout=WAIT) as stream,
        stream.stream("POST", f"/agents/{agent}/messages/stream", json={"message": message}) as r,
    ):
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        for event in sse_events(r.iter_lines()):
            events.append(event)
            if event["type"] == "approval:pending":
                decided = api.post(f"/approvals/{event['id']}/{decide}", json={})
                assert decided.status_code == 200, decided.text
            if event["type"] == "question:pending":
                answered = api.post(f"/questions/{event['id']}/answer", json={"answer": ANSWER})
                assert answered.status_code == 200, answered.text
    return validated(events)


@pytest.mark.parametrize(
    ("agent", "message", "decide"),
    [
        ("shop", FINISHES, "approve"),
        ("shop", ASKS, "approve"),
        ("shop", ASKS, "deny"),
        ("shop", QUESTION, "approve"),
        ("shop", BATCH, "approve"),
        ("broken", FAILS, "approve"),
    ],
    ids=["finishes", "approved", "denied", "question", "batch", "fails"],
)
def test_the_stream_function_carries_the_local_streams_events(
    function_url: str, http: httpx.Client, agent: str, message: str, decide: str
) -> None:
    local = sse(http, agent, message, decide)
    deployed = streamed(function_url, http, agent, message, decide)
    assert per_run(deployed) == per_run(local)
    assert deployed[0]["type"] == "session" and deployed[-1]["type"] in ("done", "error")


class BaseUrlOnly(NoStream):
    """The HTTP API of a deployed stack: no stream route; records what it was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.asked.append(f"{request.method} {request.url.path}")
        return super().handle_request(request)


def deployed_client(stack: LocalStack, stream_url: str, api: httpx.BaseTransport) -> Client:
    """A client of the API at the stack's URL (through ``api``), streaming from ``stream_url``."""
    client = Client(stack.url, stream_url=stream_url, wait=5)
    client.http.close()
    client.http = httpx.Client(base_url=stack.url, transport=api, timeout=WAIT)
    return client


@pytest.mark.parametrize(
    ("message", "decide"),
    [(FINISHES, "approve"), (ASKS, "approve"), (ASKS, "deny"), (QUESTION, "approve")],
    ids=["finishes", "approved", "denied", "question"],
)
def test_the_client_streams_from_a_stream_url_apart_from_the_api(
    stack: LocalStack, function_url: str, message: str, decide: str
) -> None:
    with client_for(stack, "auto") as same_url:
        reference, _ = via_client(same_url, "shop", message, decide)
    api = BaseUrlOnly()
    with deployed_client(stack, function_url, api) as client:
        events, turn = via_client(client, "shop", message, decide)
        assert client.transport == "auto"
    assert per_run(events) == per_run(reference)
    assert turn.done is not None and turn.error is None
    # The turn came over the stream URL: the API was asked for neither the stream
    # route nor the plain one (long-poll's), only for decisions and the session's count.
    assert api.refused == 0
    assert not [asked for asked in api.asked if asked.startswith("POST /agents/")]


def test_an_unreachable_stream_url_falls_back_to_long_poll(
    stack: LocalStack, function_url: str
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with client_for(stack, "auto") as same_url:
        reference, _ = via_client(same_url, "shop", ASKS)
    api = BaseUrlOnly()
    with deployed_client(stack, closed, api) as client:
        events, turn = via_client(client, "shop", ASKS)
        assert client.transport == "poll"  # remembered for the next turn
    assert per_run(events) == per_run(reference)
    assert turn.done is not None
    assert "POST /agents/shop/messages" in api.asked


def test_signoff_send_streams_from_its_stream_url(
    stack: LocalStack, function_url: str, agents: Path, tmp_path: Path
) -> None:
    def send(*options: str) -> tuple[int, list[dict[str, Any]]]:
        return signoff(
            agents, tmp_path, "send", "--url", stack.url, *options, "--transport", "sse",
            "shop", "--json", "--deny", "--reason", "no", ASKS,
        )  # fmt: skip

    one_url_code, one_url = send()
    code, events = send("--stream-url", function_url)
    assert code == one_url_code == 0
    assert [e["type"] for e in events][-2:] == ["loop:denied", "done"]
    assert per_run(events) == per_run(one_url)
    # the stream is asked for there, not at --url: nothing listens here, and SSE is forced
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    refused_code, _ = send("--stream-url", closed)
    assert refused_code == 1
