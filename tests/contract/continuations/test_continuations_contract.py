"""Contract of the Continuations port (in memory and Lambda), and the continuation event.

Moto cannot run a function, so the Lambda adapter is checked with botocore's
``Stubber`` on a real client: every invoke must carry exactly the parameters
expected, and each payload must read back, through ``continuation_session``,
as the session that was scheduled.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.stub import Stubber

from signoff.continuations import CONTINUE, continuation_event, continuation_session
from signoff.continuations.aws import LambdaContinuations
from signoff.continuations.memory import MemoryContinuations
from signoff.errors import StoreUnavailable, UsageError
from tests.support.aws import fake_credentials

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.continuations import Continuations

FUNCTION = "signoff-continue"


class Harness:
    """One adapter, what it is expected to send, and what it did send."""

    def __init__(self, continuations: Continuations) -> None:
        self.continuations = continuations

    def expect(self, session_id: str) -> None:
        """Announce a schedule the test is about to make (the Lambda stub needs it)."""

    def scheduled(self) -> list[str]:
        """The session ids scheduled so far, in order, as the receiving side reads them."""
        raise NotImplementedError


class MemoryHarness(Harness):
    def __init__(self) -> None:
        self.memory = MemoryContinuations()
        super().__init__(self.memory)
        self._seen: list[str] = []

    def scheduled(self) -> list[str]:
        self._seen += self.memory.drain()
        return list(self._seen)


class LambdaHarness(Harness):
    def __init__(self) -> None:
        self.client = boto3.client("lambda", region_name="us-east-1")
        self.stubber = Stubber(self.client)
        self.payloads: list[str] = []
        # what the client was asked to send, recorded before the stub answers
        self.client.meta.events.register("provide-client-params.lambda.Invoke", self._record)
        super().__init__(LambdaContinuations(FUNCTION, self.client))

    def _record(self, params: dict[str, Any], **_: Any) -> None:
        self.payloads.append(params["Payload"])

    def expect(self, session_id: str) -> None:
        self.stubber.add_response(
            "invoke",
            {"StatusCode": 202},
            {
                "FunctionName": FUNCTION,
                "InvocationType": "Event",
                "Payload": json.dumps({"signoff": "continue", "sessionId": session_id}),
            },
        )

    def scheduled(self) -> list[str]:
        found = [continuation_session(json.loads(payload)) for payload in self.payloads]
        return [session for session in found if session is not None]


@pytest.fixture(params=["memory", "lambda"])
def harness(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    if request.param == "memory":
        yield MemoryHarness()
        return
    fake_credentials(monkeypatch)
    lambda_harness = LambdaHarness()
    with lambda_harness.stubber:
        yield lambda_harness
        # every expected invoke was made, no more and no fewer
        lambda_harness.stubber.assert_no_pending_responses()


# --- the contract --------------------------------------------------------------------------


def test_a_scheduled_session_reaches_the_continuing_side(harness: Harness) -> None:
    harness.expect("s-1")

    harness.continuations.schedule("s-1")

    assert harness.scheduled() == ["s-1"]


def test_schedules_arrive_in_order_and_repeats_are_kept(harness: Harness) -> None:
    # the session's lease, not the port, decides whether a repeat does anything
    for session in ("s-1", "s-2", "s-1"):
        harness.expect(session)

    for session in ("s-1", "s-2", "s-1"):
        harness.continuations.schedule(session)

    assert harness.scheduled() == ["s-1", "s-2", "s-1"]


def test_an_empty_session_id_is_refused_and_nothing_is_sent(harness: Harness) -> None:
    with pytest.raises(UsageError, match="session id"):
        harness.continuations.schedule("")

    assert harness.scheduled() == []


# --- the memory adapter --------------------------------------------------------------------


def test_drain_hands_out_each_session_once() -> None:
    continuations = MemoryContinuations()
    continuations.schedule("s-1")
    continuations.schedule("s-2")

    assert continuations.drain() == ["s-1", "s-2"]
    assert continuations.drain() == []


# --- the Lambda adapter --------------------------------------------------------------------


@pytest.fixture
def lambda_harness(monkeypatch: pytest.MonkeyPatch) -> Iterator[LambdaHarness]:
    fake_credentials(monkeypatch)
    harness = LambdaHarness()
    with harness.stubber:
        yield harness


def test_the_invocation_is_asynchronous_with_the_exact_event(
    lambda_harness: LambdaHarness,
) -> None:
    lambda_harness.expect("01J0SESSION")

    lambda_harness.continuations.schedule("01J0SESSION")

    lambda_harness.stubber.assert_no_pending_responses()
    assert lambda_harness.payloads == ['{"signoff": "continue", "sessionId": "01J0SESSION"}']


@pytest.mark.parametrize(
    "code", ["TooManyRequestsException", "ResourceNotFoundException", "ServiceException"]
)
def test_a_refused_invocation_is_store_unavailable(
    lambda_harness: LambdaHarness, code: str
) -> None:
    lambda_harness.stubber.add_client_error("invoke", service_error_code=code, http_status_code=429)

    with pytest.raises(StoreUnavailable, match="s-1") as failed:
        lambda_harness.continuations.schedule("s-1")

    assert code in str(failed.value)


def test_an_invocation_that_was_not_queued_is_store_unavailable(
    lambda_harness: LambdaHarness,
) -> None:
    # a synchronous answer (200) means the event was not queued as asked
    lambda_harness.stubber.add_response("invoke", {"StatusCode": 200})

    with pytest.raises(StoreUnavailable, match="200"):
        lambda_harness.continuations.schedule("s-1")


def test_from_env_names_the_function(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_credentials(monkeypatch)
    monkeypatch.setenv("SIGNOFF_CONTINUE_FUNCTION", "signoff-api-continue")

    assert LambdaContinuations.from_env().function_name == "signoff-api-continue"


def test_from_env_without_the_variable_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIGNOFF_CONTINUE_FUNCTION", raising=False)

    with pytest.raises(UsageError, match="SIGNOFF_CONTINUE_FUNCTION"):
        LambdaContinuations.from_env()


# --- the event -----------------------------------------------------------------------------


def test_the_event_reads_back_as_its_session() -> None:
    event = continuation_event("s-9")

    assert event == {"signoff": CONTINUE, "sessionId": "s-9"}
    assert continuation_session(event) == "s-9"


@pytest.mark.parametrize(
    "event",
    [
        {},
        {"signoff": "resume", "sessionId": "s-1"},
        {"sessionId": "s-1"},
        {"Records": [{"eventSource": "aws:sqs"}]},
        {"httpMethod": "POST", "body": '{"signoff": "continue", "sessionId": "s-1"}'},
    ],
)
def test_other_events_are_not_continuations(event: dict[str, Any]) -> None:
    assert continuation_session(event) is None


def test_extra_fields_do_not_stop_a_continuation() -> None:
    event = {"signoff": "continue", "sessionId": "s-1", "attempt": 2}

    assert continuation_session(event) == "s-1"


@pytest.mark.parametrize(
    "event",
    [
        {"signoff": "continue"},
        {"signoff": "continue", "sessionId": ""},
        {"signoff": "continue", "sessionId": 42},
    ],
)
def test_a_continuation_without_a_session_is_a_usage_error(event: dict[str, Any]) -> None:
    with pytest.raises(UsageError, match="sessionId"):
        continuation_session(event)
