"""``Recovering``: backoff, Retry-After, bounded attempts, pass-through and continuations."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import pytest

from signoff.errors import ModelError, ModelRejected, ModelUnavailable, PromptTooLong
from signoff.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
    UserMessage,
)
from signoff.models.recovery import CONTINUE_PROMPT, Recovering

if TYPE_CHECKING:
    from collections.abc import Iterable

REQUEST = ModelRequest(
    system="You write stories.",
    messages=(UserMessage(content="Tell me a story."),),
    tools=(ToolSpec(name="lookup", description="Looks things up.", parameters={}),),
    max_tokens=32,
)
DONE = ModelResponse(text="The end.", usage=Usage(input_tokens=10, output_tokens=3))


class ScriptedOutcomes:
    """A model that replays responses and errors in order and records every request."""

    def __init__(self, outcomes: Iterable[ModelResponse | ModelError]) -> None:
        self._outcomes = deque(outcomes)
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        outcome = self._outcomes.popleft()
        if isinstance(outcome, ModelError):
            raise outcome
        return outcome


class Jitter:
    """Returns the given factors in turn and counts its calls."""

    def __init__(self, *factors: float) -> None:
        self._factors = deque(factors)
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return self._factors.popleft()


def unavailable(retry_after: float | None = None) -> ModelUnavailable:
    return ModelUnavailable("busy", provider="test", status=503, retry_after=retry_after)


def no_sleep(seconds: float) -> None:
    pytest.fail(f"slept {seconds}s without a failure to recover from")


def cut(text: str, input_tokens: int = 10, output_tokens: int = 5) -> ModelResponse:
    return ModelResponse(
        text=text,
        usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
        stop="max_tokens",
    )


# --- retries -------------------------------------------------------------------------------


def test_backoff_doubles_and_scales_by_jitter() -> None:
    # Given three transient failures before an answer
    inner = ScriptedOutcomes([unavailable(), unavailable(), unavailable(), DONE])
    sleeps: list[float] = []
    model = Recovering(
        inner, attempts=4, base_delay=0.5, sleep=sleeps.append, jitter=Jitter(1.0, 0.25, 0.5)
    )

    # When called
    answer = model(REQUEST)

    # Then each wait is base * 2**n times that retry's jitter factor
    assert answer == DONE
    assert sleeps == [0.5 * 1.0, 1.0 * 0.25, 2.0 * 0.5]
    assert inner.requests == [REQUEST] * 4


def test_backoff_is_capped_at_max_delay() -> None:
    inner = ScriptedOutcomes([unavailable()] * 4 + [DONE])
    sleeps: list[float] = []
    model = Recovering(
        inner,
        attempts=5,
        base_delay=1.0,
        max_delay=3.0,
        sleep=sleeps.append,
        jitter=lambda: 1.0,
    )

    model(REQUEST)

    assert sleeps == [1.0, 2.0, 3.0, 3.0]


def test_retry_after_is_waited_exactly_without_jitter() -> None:
    inner = ScriptedOutcomes([unavailable(retry_after=7.0), DONE])
    sleeps: list[float] = []
    jitter = Jitter()
    model = Recovering(inner, max_delay=20.0, sleep=sleeps.append, jitter=jitter)

    assert model(REQUEST) == DONE
    assert sleeps == [7.0]
    assert jitter.calls == 0


def test_retry_after_longer_than_max_delay_gives_up_at_once() -> None:
    error = unavailable(retry_after=90.0)
    inner = ScriptedOutcomes([error, DONE])
    sleeps: list[float] = []
    model = Recovering(inner, max_delay=20.0, sleep=sleeps.append, jitter=Jitter())

    with pytest.raises(ModelUnavailable) as caught:
        model(REQUEST)

    assert caught.value is error
    assert len(inner.requests) == 1
    assert sleeps == []


def test_attempts_bound_the_calls_and_the_last_error_surfaces() -> None:
    errors = [unavailable(), unavailable(), unavailable()]
    inner = ScriptedOutcomes([*errors, DONE])
    sleeps: list[float] = []
    model = Recovering(inner, attempts=3, sleep=sleeps.append, jitter=lambda: 1.0)

    with pytest.raises(ModelUnavailable) as caught:
        model(REQUEST)

    assert caught.value is errors[-1]
    assert len(inner.requests) == 3
    assert sleeps == [0.5, 1.0]


def test_a_single_attempt_never_sleeps() -> None:
    inner = ScriptedOutcomes([unavailable(), DONE])
    sleeps: list[float] = []
    model = Recovering(inner, attempts=1, sleep=sleeps.append)

    with pytest.raises(ModelUnavailable):
        model(REQUEST)

    assert len(inner.requests) == 1
    assert sleeps == []


@pytest.mark.parametrize(
    "error",
    [
        PromptTooLong("prompt is too long", provider="test", status=400),
        ModelRejected("invalid x-api-key", provider="test", status=401),
    ],
)
def test_permanent_errors_pass_straight_through(error: ModelError) -> None:
    inner = ScriptedOutcomes([error, DONE])
    sleeps: list[float] = []
    model = Recovering(inner, sleep=sleeps.append, jitter=Jitter())

    with pytest.raises(ModelError) as caught:
        model(REQUEST)

    assert caught.value is error
    assert len(inner.requests) == 1
    assert sleeps == []


@pytest.mark.parametrize(
    ("attempts", "continuations", "named"),
    [(0, 2, "attempts"), (4, -1, "continuations")],
)
def test_nonsensical_limits_are_refused(attempts: int, continuations: int, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Recovering(ScriptedOutcomes([]), attempts=attempts, continuations=continuations)


# --- continuations -------------------------------------------------------------------------


def test_truncated_text_is_continued_and_concatenated() -> None:
    # Given an answer cut off twice before it ends
    inner = ScriptedOutcomes(
        [
            cut("Once upon", 10, 5),
            cut(" a time", 20, 5),
            ModelResponse(text=" it ended.", usage=Usage(input_tokens=30, output_tokens=4)),
        ]
    )
    model = Recovering(inner, continuations=2, sleep=no_sleep)

    # When called
    answer = model(REQUEST)

    # Then the parts join, usage adds up and the answer counts as finished
    assert answer == ModelResponse(
        text="Once upon a time it ended.",
        usage=Usage(input_tokens=60, output_tokens=14),
        stop="end",
    )
    # And each follow-up replays the conversation with everything written so far
    assert inner.requests[0] == REQUEST
    assert inner.requests[1] == REQUEST.model_copy(
        update={
            "messages": (
                *REQUEST.messages,
                AssistantMessage(content="Once upon"),
                UserMessage(content=CONTINUE_PROMPT),
            )
        }
    )
    assert inner.requests[2].messages == (
        *REQUEST.messages,
        AssistantMessage(content="Once upon a time"),
        UserMessage(content=CONTINUE_PROMPT),
    )
    assert inner.requests[2].tools == REQUEST.tools
    assert inner.requests[2].max_tokens == REQUEST.max_tokens


def test_still_truncated_after_the_last_continuation_reports_max_tokens() -> None:
    inner = ScriptedOutcomes([cut("a"), cut("b"), cut("c")])
    model = Recovering(inner, continuations=1)

    answer = model(REQUEST)

    assert answer.text == "ab"
    assert answer.stop == "max_tokens"
    assert answer.usage == Usage(input_tokens=20, output_tokens=10)
    assert len(inner.requests) == 2


def test_zero_continuations_returns_the_cut_answer() -> None:
    inner = ScriptedOutcomes([cut("a"), DONE])
    model = Recovering(inner, continuations=0)

    assert model(REQUEST) == cut("a")
    assert len(inner.requests) == 1


def test_a_cut_answer_with_tool_calls_is_not_continued() -> None:
    with_call = ModelResponse(
        text="Looking it up",
        tool_calls=(ToolCall(id="c1", name="lookup", args={"q": "x"}),),
        stop="max_tokens",
    )
    inner = ScriptedOutcomes([with_call, DONE])
    model = Recovering(inner)

    assert model(REQUEST) == with_call
    assert len(inner.requests) == 1


def test_a_continuation_is_retried_like_any_call() -> None:
    inner = ScriptedOutcomes([cut("Once"), unavailable(retry_after=1.0), DONE])
    sleeps: list[float] = []
    model = Recovering(inner, sleep=sleeps.append)

    answer = model(REQUEST)

    assert answer.text == "OnceThe end."
    assert answer.stop == "end"
    assert sleeps == [1.0]
    assert inner.requests[1] == inner.requests[2]


def test_missing_usage_on_a_part_keeps_the_known_counts() -> None:
    inner = ScriptedOutcomes(
        [cut("Once", 10, 5), ModelResponse(text=" more.", usage=None, stop="end")]
    )
    model = Recovering(inner)

    assert model(REQUEST).usage == Usage(input_tokens=10, output_tokens=5)
