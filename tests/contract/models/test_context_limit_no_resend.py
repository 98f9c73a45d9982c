"""A prompt compaction cannot shorten is never sent again: the turn fails at once.

After a provider's context-limit rejection (or a reply stopped by a full context
window) the engine compacts and asks once more. When compaction can drop nothing —
a turn whose prompt is one long message — the same request again would be a
billed call that must fail the same way (docs/models.md, Retries: "not retried as
is"). Each provider's adapter, behind ``Recovering`` as deployed, is asked exactly
once and the turn fails with the provider's own context-limit error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest
from botocore.stub import Stubber

from signoff.errors import PromptTooLong
from signoff.models.anthropic import AnthropicMessages
from signoff.models.bedrock import BedrockConverse
from signoff.models.openai import OpenAIChat
from signoff.models.recovery import Recovering
from tests.fixtures.recorded import bedrock_runtime_client
from tests.support.agents import engine, make_agent, run_turn

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.messages import ModelRequest, ModelResponse

# One user message, nothing before it: there is nothing compaction may drop.
TASK = "Summarise this contract: " + "clause " * 2000
OPENAI_LIMIT = (
    "This model's maximum context length is 128000 tokens. However, your messages "
    "resulted in 204308 tokens. Please reduce the length of the messages."
)
ANTHROPIC_LIMIT = "prompt is too long: 204661 tokens > 200000 maximum"
BEDROCK_LIMIT = "Input is too long for requested model."


def counting(
    reply: Callable[[httpx.Request], httpx.Response],
) -> tuple[httpx.MockTransport, list[Any]]:
    sent: list[Any] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return reply(request)

    return httpx.MockTransport(handle), sent


def fail_the_turn(model: Callable[[ModelRequest], ModelResponse]) -> PromptTooLong:
    deployed = Recovering(model, sleep=lambda _: None)
    with pytest.raises(PromptTooLong) as failed:
        run_turn(engine(make_agent(), deployed), TASK)  # type: ignore[arg-type]
    return failed.value


def test_openai_is_asked_once_for_a_prompt_that_cannot_be_shortened() -> None:
    error = {
        "message": OPENAI_LIMIT,
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
    transport, sent = counting(lambda _: httpx.Response(400, json={"error": error}))

    failed = fail_the_turn(OpenAIChat.from_settings(model="gpt-4o-mini", transport=transport))

    assert len(sent) == 1
    assert failed.provider == "openai" and failed.status == 400
    assert OPENAI_LIMIT in str(failed)


def test_anthropic_is_asked_once_for_a_prompt_that_cannot_be_shortened() -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": ANTHROPIC_LIMIT}}
    transport, sent = counting(lambda _: httpx.Response(400, json=body))

    failed = fail_the_turn(
        AnthropicMessages.from_settings(model="claude-sonnet-4-5", transport=transport)
    )

    assert len(sent) == 1
    assert failed.provider == "anthropic" and failed.status == 400
    assert ANTHROPIC_LIMIT in str(failed)


def test_bedrock_is_asked_once_for_a_prompt_that_cannot_be_shortened() -> None:
    client = bedrock_runtime_client()
    with Stubber(client) as stubber:
        # one answer only: a second converse call would find none and fail differently
        stubber.add_client_error(
            "converse",
            service_error_code="ValidationException",
            service_message=BEDROCK_LIMIT,
            http_status_code=400,
        )

        failed = fail_the_turn(BedrockConverse("amazon.nova-lite-v1:0", client))

        stubber.assert_no_pending_responses()
    assert failed.provider == "bedrock" and failed.status == 400
    assert BEDROCK_LIMIT in str(failed)


def anthropic_full_window(_: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "The contract says"}],
            "stop_reason": "model_context_window_exceeded",
            "usage": {"input_tokens": 199_990, "output_tokens": 10},
        },
    )


def test_a_full_context_window_stop_with_nothing_to_compact_is_not_asked_again() -> None:
    transport, sent = counting(anthropic_full_window)

    failed = fail_the_turn(
        AnthropicMessages.from_settings(model="claude-sonnet-4-5", transport=transport)
    )

    assert len(sent) == 1
    assert "the context window is full and nothing more can be compacted" in str(failed)


def test_bedrocks_full_context_window_stop_with_nothing_to_compact_is_not_asked_again() -> None:
    client = bedrock_runtime_client()
    reply = {
        "output": {"message": {"role": "assistant", "content": [{"text": "The contract"}]}},
        "stopReason": "model_context_window_exceeded",
        "usage": {"inputTokens": 127_990, "outputTokens": 10, "totalTokens": 128_000},
        "metrics": {"latencyMs": 120},
    }
    with Stubber(client) as stubber:
        stubber.add_response("converse", reply)

        failed = fail_the_turn(BedrockConverse("amazon.nova-lite-v1:0", client))

        stubber.assert_no_pending_responses()
    assert "nothing more can be compacted" in str(failed)
