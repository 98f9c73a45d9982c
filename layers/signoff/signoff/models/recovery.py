"""Retries transient model failures and continues truncated answers, within the call's time."""

from __future__ import annotations

import logging
import random
import time
from typing import TYPE_CHECKING

from signoff.errors import ModelOutOfTime, ModelUnavailable
from signoff.messages import AssistantMessage, ModelResponse, Usage, UserMessage

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.messages import ModelRequest
    from signoff.models.base import ModelCall

__all__ = ["CONTINUE_PROMPT", "Recovering"]

CONTINUE_PROMPT = "Continue exactly where you stopped; do not repeat anything."

_log = logging.getLogger(__name__)


class Recovering:
    """A ``ModelCall`` that retries ``ModelUnavailable`` and continues cut-off text.

    ``PromptTooLong`` and ``ModelRejected`` pass straight through: the engine
    compacts on the first, and the second cannot succeed on a retry.

    A request's ``timeout`` is the time the whole call may take (the invocation's
    remaining time): each attempt is handed what is left of it, and no retry
    starts, nor waits, past it (``ModelOutOfTime``).
    """

    def __init__(
        self,
        inner: ModelCall,
        *,
        attempts: int = 4,
        base_delay: float = 0.5,
        max_delay: float = 20.0,
        continuations: int = 2,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        if continuations < 0:
            raise ValueError("continuations must not be negative")
        self.inner = inner
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.continuations = continuations
        self._sleep = sleep
        self._jitter = jitter
        self._monotonic = monotonic

    def __call__(self, request: ModelRequest) -> ModelResponse:
        """Calls the inner model, retrying and continuing as configured.

        Raises:
            ModelOutOfTime: the request's ``timeout`` ran out first, or the next
                attempt would start after it.
            ModelUnavailable: still failing after ``attempts`` calls, or the provider
                asked for a wait longer than ``max_delay``.
            PromptTooLong: from the inner model, unretried.
            ModelRejected: from the inner model, unretried.
        """
        deadline = None if request.timeout is None else self._monotonic() + request.timeout
        response = self._call(request, deadline)
        text = response.text
        usage = response.usage
        for _ in range(self.continuations):
            # Continuing an empty answer has nothing to anchor on; tool calls are never cut.
            if response.stop != "max_tokens" or response.tool_calls or not text:
                break
            follow_up = request.model_copy(
                update={
                    "messages": (
                        *request.messages,
                        AssistantMessage(content=text),
                        UserMessage(content=CONTINUE_PROMPT),
                    )
                }
            )
            response = self._call(follow_up, deadline)
            text += response.text
            usage = _add(usage, response.usage)
        return response.model_copy(update={"text": text, "usage": usage})

    def _call(self, request: ModelRequest, deadline: float | None) -> ModelResponse:
        failures = 0
        while True:
            try:
                return self.inner(self._within(request, deadline))
            except ModelOutOfTime:
                raise
            except ModelUnavailable as exc:
                failures += 1
                delay = self._delay(failures - 1, exc) if failures < self.attempts else None
                if deadline is not None and self._monotonic() + (delay or 0.0) >= deadline:
                    # The attempt used up the call's time, or the retry would start past
                    # it: the turn continues in a fresh invocation instead of failing.
                    raise ModelOutOfTime(
                        f"{exc} (no time left for a retry)", provider=exc.provider
                    ) from exc
                if delay is None:
                    raise
                _log.warning(
                    "model unavailable, retrying in %.2fs (attempt %d of %d): %s",
                    delay,
                    failures + 1,
                    self.attempts,
                    exc,
                )
                self._sleep(delay)

    def _within(self, request: ModelRequest, deadline: float | None) -> ModelRequest:
        """``request`` with what is left of the call's time as its ``timeout``."""
        if deadline is None:
            return request
        left = deadline - self._monotonic()
        if left <= 0:
            raise ModelOutOfTime("no time left for the model call", provider="engine")
        return request.model_copy(update={"timeout": left})

    def _delay(self, attempt: int, exc: ModelUnavailable) -> float | None:
        """Seconds before the next attempt, or None when the provider asks for too long."""
        if exc.retry_after is not None:
            # A Lambda has minutes at most; waiting out a long Retry-After burns them idle.
            return exc.retry_after if exc.retry_after <= self.max_delay else None
        return min(self.max_delay, self.base_delay * 2.0**attempt) * self._jitter()


def _add(left: Usage | None, right: Usage | None) -> Usage | None:
    if left is None or right is None:
        return left or right
    return Usage(
        input_tokens=left.input_tokens + right.input_tokens,
        output_tokens=left.output_tokens + right.output_tokens,
    )
