"""The local stack's Lambda Invoke API: continuations through the deployed adapter, unpatched."""

from __future__ import annotations

import io
import logging
import threading
from typing import TYPE_CHECKING, Any

import boto3
import httpx
import pytest

from signoff.continuations.aws import LambdaContinuations
from signoff.durable.decide import verdict_of
from signoff.errors import StoreUnavailable
from signoff_dev.local.lambda_api import LambdaInvokeApi
from tests.support.actors import person
from tests.support.local_stack import REFUND, WAIT, eventually
from tests.support.local_stack import http as http
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff_dev.local.stack import LocalStack


class _Recorder:
    """A function that keeps the events it is invoked with."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.called = threading.Event()

    def invoke(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        self.called.set()


@pytest.fixture
def api() -> Iterator[tuple[LambdaInvokeApi, _Recorder]]:
    recorder = _Recorder()
    served = LambdaInvokeApi({"signoff-message": recorder}, report=lambda _: None)
    served.start()
    try:
        yield served, recorder
    finally:
        served.stop(timeout=5.0)


def _continuations(api: LambdaInvokeApi, name: str) -> LambdaContinuations:
    client = boto3.client(
        "lambda",
        endpoint_url=api.endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    return LambdaContinuations(name, client)


def test_the_deployed_adapter_invokes_the_function_with_the_continuation_event(
    api: tuple[LambdaInvokeApi, _Recorder],
) -> None:
    served, recorder = api
    _continuations(served, "signoff-message").schedule("s-1")
    assert recorder.called.wait(WAIT)
    assert recorder.events == [{"signoff": "continue", "sessionId": "s-1"}]


def test_a_name_with_a_qualifier_invokes_the_function(
    api: tuple[LambdaInvokeApi, _Recorder],
) -> None:
    # The template's continuations name the message function's alias (<stack>-message:live)
    served, recorder = api
    _continuations(served, "signoff-message:live").schedule("s-1")
    assert recorder.called.wait(WAIT)
    assert recorder.events == [{"signoff": "continue", "sessionId": "s-1"}]


def test_an_unknown_function_is_lambdas_error_to_the_adapter(
    api: tuple[LambdaInvokeApi, _Recorder],
) -> None:
    served, recorder = api
    with pytest.raises(StoreUnavailable, match="ResourceNotFoundException"):
        _continuations(served, "signoff-nothing").schedule("s-1")
    assert recorder.events == []


def test_what_a_web_page_could_send_is_refused_and_invokes_nothing(
    api: tuple[LambdaInvokeApi, _Recorder],
) -> None:
    served, recorder = api
    url = f"{served.endpoint}/2015-03-31/functions/signoff-message/invocations"
    body = b'{"signoff": "continue", "sessionId": "s-1"}'
    event = {"X-Amz-Invocation-Type": "Event"}
    signed = {**event, "Authorization": "AWS4-HMAC-SHA256 Credential=local/..."}
    unsigned = httpx.post(url, content=body, headers={**event, "Content-Type": "text/plain"})
    rebound = httpx.post(url, content=body, headers={**signed, "Host": "evil.example"})
    waiting = httpx.post(
        url, content=body, headers={**signed, "X-Amz-Invocation-Type": "RequestResponse"}
    )
    assert (unsigned.status_code, rebound.status_code, waiting.status_code) == (403, 403, 400)
    assert recorder.events == []


def test_the_message_function_continues_turns_through_the_composition_roots_adapter(
    stack: LocalStack, http: httpx.Client
) -> None:
    # the function's own services, as signoff.aws built them: nothing replaced after import
    api = stack.message_api()
    assert isinstance(api.continuations, LambdaContinuations)
    paused = http.post("/agents/customer-service/messages", json={"message": REFUND}).json()
    # a click acknowledged before its resume (a chat's): the turn goes on through a continuation
    api.turns.decide(
        paused["id"],
        verdict_of("approve", None, None),
        person("tester", "api"),
        schedule=api.continuations.schedule,
        resume=False,
    )
    session = f"/agents/customer-service/sessions/{paused['sessionId']}"
    done = eventually(
        lambda: (status := http.get(session).json())["status"] == "done" and status,
        "the continued turn to finish",
    )
    assert done["text"]


def test_a_crashed_invocation_is_reported_and_the_api_serves_on() -> None:
    lines: list[str] = []

    class Crashing:
        def invoke(self, event: dict[str, Any]) -> None:
            raise RuntimeError("boom")

    served = LambdaInvokeApi({"signoff-message": Crashing()}, report=lines.append)
    served.start()
    try:
        _continuations(served, "signoff-message").schedule("s-1")
        eventually(lambda: lines, "the crash to be reported")
        _continuations(served, "signoff-message").schedule("s-2")  # still served
        eventually(lambda: len(lines) == 2, "the second crash to be reported")
    finally:
        served.stop(timeout=5.0)
    assert "signoff-message failed" in lines[0] and "RuntimeError: boom" in lines[0]


def test_a_continuation_for_a_done_session_is_a_logged_no_op_not_a_crash(
    stack: LocalStack, http: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="signoff.durable.turns")
    api = stack.message_api()
    paused = http.post("/agents/customer-service/messages", json={"message": REFUND}).json()
    approved = http.post(f"/approvals/{paused['id']}/approve", json={})
    assert approved.status_code == 200, approved.text
    session = f"/agents/customer-service/sessions/{paused['sessionId']}"
    assert http.get(session).json()["status"] == "done"
    console = stack.settings.console  # where the stack reports a crashed invocation
    assert isinstance(console, io.StringIO)
    reported = len(console.getvalue())

    # a second delivery of a continuation, as Lambda's retry would make one
    api.continuations.schedule(paused["sessionId"])

    line = f"continuation skipped: session {paused['sessionId']} is done"
    eventually(lambda: line in caplog.messages, line)
    assert "asynchronous invocation of" not in console.getvalue()[reported:]
    assert http.get(session).json()["status"] == "done"
