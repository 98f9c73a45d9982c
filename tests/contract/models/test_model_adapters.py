"""Contract of the real model adapters, replayed against recorded provider exchanges.

Every adapter runs the same conversation and must produce the same
``ModelResponse`` values; only the wire format in the fixture files differs.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import pytest
from botocore.stub import Stubber

from signoff.errors import ModelRejected, ModelUnavailable, PromptTooLong
from signoff.http_errors import retry_after
from signoff.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from signoff.models.anthropic import AnthropicMessages
from signoff.models.bedrock import BedrockConverse
from signoff.models.openai import OpenAIChat
from signoff.models.recovery import Recovering
from tests.fixtures.recorded import (
    RecordedBedrock,
    RecordedTransport,
    bedrock_runtime_client,
    load_exchanges,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.models.base import ModelCall

OPENAI_KEY = "sk-test-openai-7f3a9c"
ANTHROPIC_KEY = "sk-ant-test-4b2e8d"

# --- the shared conversation ---------------------------------------------------------------

SYSTEM = "You are a concise weather assistant."
WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name"}},
        "required": ["city"],
    },
)
ASK = UserMessage(content="What's the weather in Paris and Lyon?")
CALLS = (
    ToolCall(id="call_paris", name="get_weather", args={"city": "Paris"}),
    ToolCall(id="call_lyon", name="get_weather", args={"city": "Lyon"}),
)
STEP1 = ModelRequest(system=SYSTEM, messages=(ASK,), tools=(WEATHER,), max_tokens=1024)
STEP1_ANSWER = ModelResponse(
    text="Let me check both cities.",
    tool_calls=CALLS,
    usage=Usage(input_tokens=96, output_tokens=58),
    stop="tool_use",
)
STEP2 = STEP1.model_copy(
    update={
        "messages": (
            ASK,
            AssistantMessage(content=STEP1_ANSWER.text, tool_calls=CALLS),
            ToolResultMessage(
                call_id="call_paris", name="get_weather", content='{"temp_c": 18, "sky": "sunny"}'
            ),
            ToolResultMessage(
                call_id="call_lyon",
                name="get_weather",
                content="weather service timed out",
                is_error=True,
            ),
        )
    }
)
STEP2_ANSWER = ModelResponse(
    text="Paris: 18 °C and sunny. Lyon's forecast is unavailable right now.",
    usage=Usage(input_tokens=171, output_tokens=17),
    stop="end",
)

OSLO_CALL = ToolCall(id="call_oslo", name="get_weather", args={"city": "Oslo"})
BARE_CALL = ModelRequest(
    system=SYSTEM,
    messages=(
        UserMessage(content="Weather in Oslo?"),
        AssistantMessage(tool_calls=(OSLO_CALL,)),
        ToolResultMessage(
            call_id="call_oslo", name="get_weather", content='{"temp_c": -3, "sky": "snow"}'
        ),
    ),
    tools=(WEATHER,),
    max_tokens=1024,
)
BARE_CALL_ANSWER = ModelResponse(
    text="Oslo: -3 °C with snow.", usage=Usage(input_tokens=120, output_tokens=9), stop="end"
)

HAIKU = ModelRequest(
    system=SYSTEM, messages=(UserMessage(content="Write a haiku about rain."),), max_tokens=8
)
HAIKU_CUT = ModelResponse(
    text="Soft rain on the roof,", usage=Usage(input_tokens=24, output_tokens=8), stop="max_tokens"
)

PING = ModelRequest(
    system="Be brief.", messages=(UserMessage(content="Say hello."),), max_tokens=64
)
PING_ANSWER = ModelResponse(
    text="Hello!", usage=Usage(input_tokens=12, output_tokens=3), stop="end"
)


# --- one replay harness per adapter ----------------------------------------------------------


@dataclass
class Replay:
    """Builds one adapter whose provider answers with the named recorded exchanges."""

    provider: str
    monkeypatch: pytest.MonkeyPatch
    recording: RecordedTransport | RecordedBedrock | None = None

    @property
    def secret(self) -> str:
        return {"openai": OPENAI_KEY, "anthropic": ANTHROPIC_KEY, "bedrock": "test"}[self.provider]

    @property
    def requests(self) -> int:
        assert self.recording is not None
        return len(self.recording.requests)

    def model(self, *names: str) -> ModelCall:
        exchanges = load_exchanges(self.provider, *names)
        if self.provider == "bedrock":
            bedrock = RecordedBedrock(exchanges)
            self.recording = bedrock
            return BedrockConverse("us.anthropic.claude-sonnet-4-5-20250929-v1:0", bedrock.client)
        transport = RecordedTransport(exchanges)
        self.recording = transport
        if self.provider == "openai":
            self.monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
            return OpenAIChat.from_settings(model="gpt-4o-mini", transport=transport)
        self.monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        return AnthropicMessages.from_settings(model="claude-sonnet-4-5", transport=transport)


@pytest.fixture(params=["openai", "anthropic", "bedrock"])
def replay(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Replay]:
    harness = Replay(request.param, monkeypatch)
    yield harness
    if harness.recording is not None:
        harness.recording.assert_done()


def recovering(model: ModelCall, sleeps: list[float]) -> Recovering:
    return Recovering(model, sleep=sleeps.append, jitter=lambda: 1.0)


# --- the contract --------------------------------------------------------------------------


def test_two_step_tool_conversation(replay: Replay) -> None:
    # Given a model that first asks for two tools, then answers from their results
    model = replay.model("step1_tool_call", "step2_final")

    # When the turn sends the question, then the assistant's calls and both results
    first = model(STEP1)
    second = model(STEP2)

    # Then both replies are translated, and the fixtures checked each wire request exactly
    assert first == STEP1_ANSWER
    assert second == STEP2_ANSWER
    assert replay.requests == 2


def test_assistant_tool_call_without_text(replay: Replay) -> None:
    model = replay.model("bare_tool_call")

    assert model(BARE_CALL) == BARE_CALL_ANSWER


def test_truncated_answer_maps_to_max_tokens(replay: Replay) -> None:
    model = replay.model("max_tokens")

    assert model(HAIKU) == HAIKU_CUT


def test_rate_limit_is_retried_after_the_providers_delay(replay: Replay) -> None:
    sleeps: list[float] = []
    model = recovering(replay.model("ping_rate_limited", "ping_ok"), sleeps)

    assert model(PING) == PING_ANSWER
    assert sleeps == [2.0]
    assert replay.requests == 2


def test_rate_limit_error_carries_retry_after(replay: Replay) -> None:
    model = replay.model("ping_rate_limited")

    with pytest.raises(ModelUnavailable) as caught:
        model(PING)

    assert caught.value.retry_after == 2.0
    assert caught.value.status == 429


def test_server_error_is_retried_with_backoff(replay: Replay) -> None:
    sleeps: list[float] = []
    model = recovering(replay.model("ping_server_error", "ping_ok"), sleeps)

    assert model(PING) == PING_ANSWER
    assert sleeps == [0.5]
    assert replay.requests == 2


def test_authentication_failure_is_rejected_after_one_request(replay: Replay) -> None:
    sleeps: list[float] = []
    model = recovering(replay.model("ping_unauthorized"), sleeps)

    with pytest.raises(ModelRejected) as caught:
        model(PING)

    assert replay.requests == 1
    assert sleeps == []
    assert caught.value.status in (401, 403)
    assert replay.secret not in str(caught.value)


def test_context_length_rejection_is_prompt_too_long(replay: Replay) -> None:
    sleeps: list[float] = []
    model = recovering(replay.model("ping_too_long"), sleeps)

    with pytest.raises(PromptTooLong):
        model(PING)

    assert replay.requests == 1
    assert sleeps == []


def test_timeout_is_unavailable(replay: Replay) -> None:
    model = replay.model("ping_timeout")

    with pytest.raises(ModelUnavailable) as caught:
        model(PING)

    assert caught.value.retry_after is None
    assert caught.value.__cause__ is not None


def test_timeout_then_success_through_recovering(replay: Replay) -> None:
    sleeps: list[float] = []
    model = recovering(replay.model("ping_timeout", "ping_ok"), sleeps)

    assert model(PING) == PING_ANSWER
    assert sleeps == [0.5]


# --- adapter-specific behaviour ------------------------------------------------------------


def test_openai_keeps_unparseable_arguments_raw() -> None:
    transport = RecordedTransport(load_exchanges("openai", "invalid_arguments"))
    model = OpenAIChat(
        model="gpt-4o-mini",
        client=httpx.Client(
            base_url="https://api.openai.com/v1",
            headers={"authorization": f"Bearer {OPENAI_KEY}"},
            transport=transport,
        ),
    )
    request = ModelRequest(
        system=SYSTEM,
        messages=(UserMessage(content="Weather in Oslo?"),),
        tools=(WEATHER,),
        max_tokens=1024,
    )

    answer = model(request)

    assert answer.tool_calls == (
        ToolCall(id="call_oslo", name="get_weather", args={"_raw": '{"city": "Oslo"'}),
    )
    # Not a call to run: the engine reports it to the model
    # (tests/unit/engine/test_engine_stops.py).
    assert answer.stop == "malformed_tool_use"
    assert answer.text == ""
    transport.assert_done()


def test_openai_without_a_key_sends_no_authorization(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a keyless local server such as Ollama
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    transport = RecordedTransport(load_exchanges("openai", "ollama_keyless"))
    model = OpenAIChat.from_settings(
        model="llama3.2",
        base_url="http://localhost:11434/v1",
        api_key_env="OLLAMA_API_KEY",
        transport=transport,
    )

    answer = model(PING)

    # Then the request went out without Authorization and a reply without usage maps
    assert answer == PING_ANSWER
    assert transport.requests[0].url.host == "localhost"
    transport.assert_done()


def test_openai_max_tokens_field_is_configurable() -> None:
    model = OpenAIChat(
        model="o4-mini", client=httpx.Client(), max_tokens_field="max_completion_tokens"
    )

    body = model.request_body(PING)

    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body


def test_openai_non_json_success_is_rejected() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text="<html>proxy</html>"))
    model = OpenAIChat(
        model="gpt-4o-mini", client=httpx.Client(base_url="http://x/v1", transport=transport)
    )

    with pytest.raises(ModelRejected, match="not JSON"):
        model(PING)


def test_anthropic_puts_tool_results_before_text_in_one_user_message() -> None:
    model = AnthropicMessages(model="claude-sonnet-4-5", client=httpx.Client())
    request = PING.model_copy(
        update={
            "messages": (
                UserMessage(content="Weather in Oslo?"),
                AssistantMessage(tool_calls=(OSLO_CALL,)),
                UserMessage(content="And in Celsius, please."),
                ToolResultMessage(call_id="call_oslo", name="get_weather", content="-3 °C"),
            )
        }
    )

    messages = model.request_body(request)["messages"]

    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_oslo", "content": "-3 °C"},
        {"type": "text", "text": "And in Celsius, please."},
    ]


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        ("ThrottlingException", "Too many requests", ModelUnavailable),
        ("ServiceUnavailableException", "Service unavailable", ModelUnavailable),
        ("ModelNotReadyException", "Model is not ready", ModelUnavailable),
        ("InternalServerException", "Internal error", ModelUnavailable),
        (
            "ValidationException",
            "prompt is too long: 204661 tokens > 200000 maximum",
            PromptTooLong,
        ),
        ("ValidationException", "Malformed input request", ModelRejected),
        ("ResourceNotFoundException", "Model not found", ModelRejected),
        ("AccessDeniedException", "You don't have access", ModelRejected),
    ],
)
def test_bedrock_error_codes(code: str, message: str, expected: type[Exception]) -> None:
    client = bedrock_runtime_client()
    with Stubber(client) as stubber:
        stubber.add_client_error("converse", service_error_code=code, service_message=message)
        model = BedrockConverse("amazon.nova-lite-v1:0", client)

        with pytest.raises(expected) as caught:
            model(PING)

    assert message in str(caught.value)


def test_adapters_load_neither_boto3_nor_botocore_at_import() -> None:
    code = (
        "import sys\n"
        "import signoff.models.bedrock, signoff.models.openai, signoff.models.anthropic\n"
        "import signoff.models.recovery\n"
        "loaded = sorted(m for m in ('boto3', 'botocore') if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )

    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Mon, 30 Nov 2026 00:00:30 GMT"}, 30.0),
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_parsing(headers: dict[str, str], expected: float | None) -> None:
    midnight = 1_795_996_800.0  # 2026-11-30T00:00:00Z

    assert retry_after(headers, now=lambda: midnight) == expected


@pytest.mark.parametrize(
    ("api_key", "echoed"),
    [
        ("vllm-local-secret-42", "vllm-local-secret-42"),
        ("sk-live-5f1e2d3c4b5a", "sk-live-****************4b5a"),
    ],
)
def test_error_messages_never_echo_the_api_key(
    api_key: str, echoed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a server whose 401 message quotes the key it was sent, whole or masked
    monkeypatch.setenv("VLLM_API_KEY", api_key)
    transport = httpx.MockTransport(
        lambda request: httpx.Response(
            401, json={"error": {"message": f"Incorrect API key provided: {echoed}."}}
        )
    )
    model = OpenAIChat.from_settings(
        model="qwen3",
        base_url="http://vllm:8000/v1",
        api_key_env="VLLM_API_KEY",
        transport=transport,
    )

    with pytest.raises(ModelRejected) as caught:
        model(PING)

    # Then the message keeps the provider's words but not the key
    assert "Incorrect API key provided" in str(caught.value)
    assert echoed not in str(caught.value)
    assert api_key[-4:] not in str(caught.value)


def test_bedrock_from_settings_leaves_retries_to_recovering() -> None:
    model = BedrockConverse.from_settings(model="amazon.nova-lite-v1:0", region="eu-west-1")

    assert model.model == "amazon.nova-lite-v1:0"
    assert model.client.meta.region_name == "eu-west-1"
    assert model.client.meta.config.retries["total_max_attempts"] == 1
    assert model.client.meta.config.read_timeout == 60.0
