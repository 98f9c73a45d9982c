"""Every context-limit signal of every provider is ``PromptTooLong``; other 400s stay permanent.

One table per provider: the HTTP status, the error type or code and the message as
the provider sends them (current and past wordings; the sources are quoted in
signoff/models/_limits.py). A context-limit rejection is the one the engine can
remedy by compacting; any other 400 must stay a ``ModelRejected`` carrying the
provider's own message, so nobody retries a request that cannot succeed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest
from botocore.stub import Stubber

from signoff.errors import ModelRejected, PromptTooLong
from signoff.messages import ModelRequest, UserMessage
from signoff.models.anthropic import AnthropicMessages
from signoff.models.bedrock import BedrockConverse
from signoff.models.openai import OpenAIChat
from tests.fixtures.recorded import bedrock_runtime_client

if TYPE_CHECKING:
    from collections.abc import Callable

PING = ModelRequest(system="Be brief.", messages=(UserMessage(content="ping"),), max_tokens=64)

ANTHROPIC = [
    # (status, error type, message, expected)
    (400, "invalid_request_error", "prompt is too long: 204661 tokens > 200000 maximum", True),
    (
        400,
        "invalid_request_error",
        "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, "
        "decrease input length or `max_tokens` and try again",
        True,
    ),
    (
        400,
        "invalid_request_error",
        "input length and max_tokens exceed context limit: 90402 + 116650 > 204648, "
        "decrease input length or max_tokens and try again",
        True,
    ),
    (413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", True),
    (400, "invalid_request_error", "max_tokens: 300000 > 64000, which is the maximum", False),
    (
        400,
        "invalid_request_error",
        "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks",
        False,
    ),
    (400, "invalid_request_error", "messages: text content blocks must be non-empty", False),
]

OPENAI = [
    # (status, code, message, expected)
    (
        400,
        "context_length_exceeded",
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 204308 tokens. Please reduce the length of the messages.",
        True,
    ),
    (
        400,
        "context_length_exceeded",
        "Your input exceeds the context window of this model. Please adjust your input and "
        "try again.",
        True,
    ),
    # The older wording, and compatible servers (vLLM, DeepSeek) that send no code.
    (
        400,
        None,
        "This model's maximum context length is 4097 tokens, however you requested 4231 "
        "tokens (3975 in your prompt; 256 for the completion). Please reduce your prompt; "
        "or completion length.",
        True,
    ),
    (
        400,
        None,
        "This endpoint's maximum context length is 32768 tokens. However, you requested "
        "about 42832 tokens (42832 of text input).",
        True,
    ),
    (
        400,
        None,
        "Your input exceeds the context window of this model. Please adjust your input and "
        "try again.",
        True,
    ),
    (400, "context_length_exceeded", "Request too large.", True),
    (413, None, "Request Entity Too Large", True),
    (
        400,
        "unsupported_parameter",
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
        "'max_completion_tokens' instead.",
        False,
    ),
    (
        400,
        None,
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'.",
        False,
    ),
    (400, "invalid_value", "Invalid value for 'temperature': must be at most 2.", False),
]

BEDROCK = [
    # (error code, message, expected)
    ("ValidationException", "Input is too long for requested model.", True),
    (
        "ValidationException",
        "The model returned the following errors: prompt is too long: 227255 tokens > "
        "200000 maximum",
        True,
    ),
    (
        "ValidationException",
        "The model returned the following errors: input length and `max_tokens` exceed "
        "context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and "
        "try again",
        True,
    ),
    (
        "ValidationException",
        "Too many input tokens. Max input tokens: 8192, request input token count: 9279",
        True,
    ),
    (
        "ValidationException",
        "This model's maximum context length is 32000 tokens. Please reduce the length of "
        "the prompt.",
        True,
    ),
    ("ValidationException", "A conversation must start with a user message.", False),
    (
        "ValidationException",
        "The number of toolResult blocks at messages.2.content exceeds the number of "
        "toolUse blocks of previous turn.",
        False,
    ),
    ("ValidationException", "Malformed input request, please reformat your input.", False),
    # The wording alone is not enough: only a validation error is about the input.
    ("AccessDeniedException", "Input is too long for requested model.", False),
]


def anthropic_replying(status: int, kind: str, message: str) -> AnthropicMessages:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    transport = httpx.MockTransport(lambda _: httpx.Response(status, json=body))
    return AnthropicMessages.from_settings(model="claude-sonnet-4-5", transport=transport)


def openai_replying(status: int, code: str | None, message: str) -> OpenAIChat:
    error: dict[str, Any] = {"message": message, "type": "invalid_request_error", "code": code}
    transport = httpx.MockTransport(lambda _: httpx.Response(status, json={"error": error}))
    return OpenAIChat.from_settings(model="gpt-4o-mini", transport=transport)


def assert_classified(
    call: Callable[[], object], status: int, message: str, too_long: bool
) -> None:
    """``call`` raises ``PromptTooLong`` or else ``ModelRejected``, with the status and words."""
    expected = PromptTooLong if too_long else ModelRejected
    with pytest.raises(expected) as caught:
        call()

    assert type(caught.value) is expected
    assert caught.value.status == status
    assert message in str(caught.value)


@pytest.mark.parametrize(("status", "kind", "message", "too_long"), ANTHROPIC)
def test_anthropic_context_limits(status: int, kind: str, message: str, too_long: bool) -> None:
    model = anthropic_replying(status, kind, message)

    assert_classified(lambda: model(PING), status, message, too_long)


@pytest.mark.parametrize(("status", "code", "message", "too_long"), OPENAI)
def test_openai_context_limits(status: int, code: str | None, message: str, too_long: bool) -> None:
    model = openai_replying(status, code, message)

    assert_classified(lambda: model(PING), status, message, too_long)


@pytest.mark.parametrize(("code", "message", "too_long"), BEDROCK)
def test_bedrock_context_limits(code: str, message: str, too_long: bool) -> None:
    client = bedrock_runtime_client()
    with Stubber(client) as stubber:
        stubber.add_client_error(
            "converse", service_error_code=code, service_message=message, http_status_code=400
        )
        model = BedrockConverse("amazon.nova-lite-v1:0", client)

        assert_classified(lambda: model(PING), 400, message, too_long)
