"""A model call fits the invocation's time: ``min(provider timeout, time left)``, and
retries stop before the deadline; a call cut there continues the turn, boundedly."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from signoff.clock import ManualClock
from signoff.engine import Continue, Engine, Finished
from signoff.engine.turn import MAX_CUT_CALLS
from signoff.errors import ModelError, ModelOutOfTime, ModelUnavailable
from signoff.messages import ModelRequest, ModelResponse, UserMessage
from signoff.models.anthropic import AnthropicMessages
from signoff.models.bedrock import BedrockConverse
from signoff.models.openai import OpenAIChat
from signoff.models.recovery import Recovering
from tests.support.agents import make_agent

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from signoff.engine import Outcome
    from signoff.models.base import ModelCall

REQUEST = ModelRequest(system="s", messages=(UserMessage(content="hi"),), max_tokens=16)
DONE = ModelResponse(text="done")


class Provider:
    """A provider on ``clock``: each outcome takes ``seconds`` (a hang takes the whole timeout)."""

    def __init__(
        self,
        clock: ManualClock,
        outcomes: Iterable[tuple[float | None, ModelResponse | ModelError]],
    ) -> None:
        self.clock = clock
        self.outcomes = deque(outcomes)
        self.timeouts: list[float | None] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.timeouts.append(request.timeout)
        seconds, outcome = self.outcomes.popleft()
        if seconds is None:  # hangs until the adapter's timeout cuts it
            assert request.timeout is not None
            self.clock.advance(request.timeout)
            raise ModelUnavailable("openai: request timed out", provider="openai")
        self.clock.advance(seconds)
        if isinstance(outcome, ModelError):
            raise outcome
        return outcome


def recovering(provider: Provider, clock: ManualClock, slept: list[float]) -> Recovering:
    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    return Recovering(provider, sleep=sleep, jitter=lambda: 1.0, monotonic=clock.monotonic)


def unavailable(retry_after: float | None = None) -> ModelUnavailable:
    return ModelUnavailable("busy", provider="openai", status=503, retry_after=retry_after)


# -- Recovering ---------------------------------------------------------------------------


def test_each_attempt_gets_what_is_left_of_the_call_s_time() -> None:
    clock = ManualClock()
    provider = Provider(clock, [(2.0, unavailable()), (3.0, unavailable()), (1.0, DONE)])
    slept: list[float] = []
    reply = recovering(provider, clock, slept)(REQUEST.model_copy(update={"timeout": 20.0}))
    assert reply.text == "done"
    # 20, then 20 - 2 - 0.5 (backoff), then 17.5 - 3 - 1.0
    assert provider.timeouts == [20.0, 17.5, 13.5]
    assert slept == [0.5, 1.0]


def test_a_hang_cut_at_the_deadline_is_out_of_time_without_a_retry() -> None:
    clock = ManualClock()
    provider = Provider(clock, [(None, DONE), (0.0, DONE)])
    slept: list[float] = []
    with pytest.raises(ModelOutOfTime):
        recovering(provider, clock, slept)(REQUEST.model_copy(update={"timeout": 25.0}))
    assert provider.timeouts == [25.0]
    assert slept == []
    assert clock.monotonic() == 25.0


def test_no_retry_waits_past_the_deadline() -> None:
    clock = ManualClock()
    # the provider asks for 15 s; only 9 are left after the first failure
    provider = Provider(clock, [(1.0, unavailable(retry_after=15.0)), (0.0, DONE)])
    slept: list[float] = []
    with pytest.raises(ModelOutOfTime):
        recovering(provider, clock, slept)(REQUEST.model_copy(update={"timeout": 10.0}))
    assert slept == []
    assert len(provider.timeouts) == 1


def test_without_a_timeout_the_retries_are_as_before() -> None:
    clock = ManualClock()
    provider = Provider(clock, [(30.0, unavailable())] * 4)
    slept: list[float] = []
    with pytest.raises(ModelUnavailable) as raised:
        recovering(provider, clock, slept)(REQUEST)
    assert not isinstance(raised.value, ModelOutOfTime)
    assert provider.timeouts == [None] * 4
    assert slept == [0.5, 1.0, 2.0]


def test_attempts_spent_with_time_left_is_the_provider_s_failure() -> None:
    clock = ManualClock()
    provider = Provider(clock, [(1.0, unavailable())] * 4)
    slept: list[float] = []
    with pytest.raises(ModelUnavailable) as raised:
        recovering(provider, clock, slept)(REQUEST.model_copy(update={"timeout": 300.0}))
    assert not isinstance(raised.value, ModelOutOfTime)
    assert len(provider.timeouts) == 4


# -- the HTTP adapters --------------------------------------------------------------------


OPENAI_REPLY = {
    "choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1},
}
ANTHROPIC_REPLY = {
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def _http_model(provider: str, seen: list[dict[str, Any]]) -> ModelCall:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return httpx.Response(200, json=OPENAI_REPLY if provider == "openai" else ANTHROPIC_REPLY)

    transport = httpx.MockTransport(handler)
    if provider == "openai":
        return OpenAIChat.from_settings(
            model="m", base_url="https://models.invalid/v1", timeout=60.0, transport=transport
        )
    return AnthropicMessages.from_settings(
        model="m", base_url="https://models.invalid", timeout=60.0, transport=transport
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("timeout", "read", "connect"),
    [(None, 60.0, 10.0), (7.5, 7.5, 7.5), (100.0, 60.0, 10.0)],
)
def test_an_http_call_takes_the_lower_of_its_timeout_and_the_time_left(
    provider: str, timeout: float | None, read: float, connect: float
) -> None:
    seen: list[dict[str, Any]] = []
    _http_model(provider, seen)(REQUEST.model_copy(update={"timeout": timeout}))
    assert seen[0]["read"] == read
    assert seen[0]["connect"] == connect
    assert seen[0]["write"] == read


# -- the engine ---------------------------------------------------------------------------


def _engine(model: Callable[[ModelRequest], ModelResponse], clock: ManualClock) -> Engine:
    return Engine(agent=make_agent(), model=model, clock=clock, deadline_margin=2.0)


def _start(engine: Engine, clock: ManualClock, seconds: float) -> Outcome:
    return engine.start(
        history=[],
        message="go",
        tenant="default",
        environment="production",
        session_id="s-1",
        deadline=clock.monotonic() + seconds,
    )


def test_the_engine_gives_the_model_the_time_left_less_its_margin() -> None:
    clock = ManualClock()
    clock.advance(100.0)
    seen: list[float | None] = []

    def model(request: ModelRequest) -> ModelResponse:
        seen.append(request.timeout)
        return DONE

    assert isinstance(_start(_engine(model, clock), clock, 20.0), Finished)
    assert seen == [18.0]


def test_no_deadline_no_timeout() -> None:
    seen: list[float | None] = []

    def model(request: ModelRequest) -> ModelResponse:
        seen.append(request.timeout)
        return DONE

    clock = ManualClock()
    engine = _engine(model, clock)
    engine.start(
        history=[], message="go", tenant="default", environment="production", session_id="s-1"
    )
    assert seen == [None]


def test_a_call_cut_at_the_deadline_continues_the_turn_and_a_fresh_invocation_makes_it() -> None:
    clock = ManualClock()
    provider = Provider(clock, [(None, DONE), (4.0, DONE)])
    engine = _engine(recovering(provider, clock, []), clock)
    outcome = _start(engine, clock, 25.0)
    assert isinstance(outcome, Continue)
    assert outcome.state.cut_calls == 1
    assert outcome.state.model_calls == 0
    history: list[Any] = [UserMessage(content="go")]
    resumed = engine.proceed(outcome.state, history, deadline=clock.monotonic() + 300.0)
    assert isinstance(resumed, Finished)
    assert resumed.text == "done"
    assert resumed.state.cut_calls == 0
    assert provider.timeouts == [23.0, 298.0]


def test_a_model_slower_than_every_invocation_fails_the_turn_after_a_few_cuts() -> None:
    clock = ManualClock()
    provider = Provider(clock, [(None, DONE)] * (MAX_CUT_CALLS + 1))
    engine = _engine(recovering(provider, clock, []), clock)
    outcome = _start(engine, clock, 30.0)
    history: list[Any] = [UserMessage(content="go")]
    for _ in range(MAX_CUT_CALLS - 1):
        assert isinstance(outcome, Continue)
        outcome = engine.proceed(outcome.state, history, deadline=clock.monotonic() + 30.0)
    assert isinstance(outcome, Continue)
    with pytest.raises(ModelOutOfTime):
        engine.proceed(outcome.state, history, deadline=clock.monotonic() + 30.0)


def test_a_provider_failure_with_time_left_still_fails_the_turn() -> None:
    clock = ManualClock()

    def model(request: ModelRequest) -> ModelResponse:
        raise ModelUnavailable("down", provider="openai", status=503)

    with pytest.raises(ModelUnavailable):
        _start(_engine(model, clock), clock, 300.0)


# -- Bedrock: botocore fixes a client's read timeout, so a shorter call takes another client


def test_a_bedrock_call_goes_through_a_client_that_gives_up_in_time() -> None:
    model = BedrockConverse.from_settings(model="amazon.nova-lite-v1:0", region="us-east-1")

    def read_timeout(limit: float | None) -> float:
        timeout: float = model.client_within(limit).meta.config.read_timeout
        return timeout

    assert read_timeout(None) == 60.0
    assert read_timeout(100.0) == 60.0
    assert read_timeout(25.0) == 21.0  # rounded down: the call ends before the deadline
    assert read_timeout(4.0) == 3.0
    assert model.client_within(24.0) is model.client_within(25.0), "built once per step"


def test_an_endless_deadline_leaves_the_provider_s_timeout_alone() -> None:
    # Api.deadline without a Lambda context (a local run) is infinitely far
    seen: list[float | None] = []

    def model(request: ModelRequest) -> ModelResponse:
        seen.append(request.timeout)
        return DONE

    clock = ManualClock()
    assert isinstance(_start(_engine(model, clock), clock, float("inf")), Finished)
    assert seen == [None]
