"""Every request signoff renders, checked against the providers' own definitions.

The recorded fixtures pin exact bytes; these checks say the bytes are right:

- OpenAI: the ``openai`` SDK's ``CompletionCreateParamsNonStreaming``, strict,
  with unknown keys refused (``tests/support/sdk_types.py``), and the chat
  completions conversation rules;
- Anthropic: the ``anthropic`` SDK's ``MessageCreateParamsNonStreaming``, the same
  way, and the Messages API conversation rules;
- Bedrock: botocore's Converse input shape with the constraints botocore leaves to
  the service (``tests/support/converse_shapes.py``) and Converse's conversation
  rules (``tests/support/conversation_rules.py``).

The requests are the shared conversation of ``test_model_adapters.py``, every
request a scripted turn sends through the engine (parallel calls, a failing tool,
unreadable calls and their corrections), an o-series request, and every
recorded fixture's request.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from signoff.messages import ModelRequest, ModelResponse, ToolCall
from signoff.models.anthropic import AnthropicMessages
from signoff.models.bedrock import BedrockConverse
from signoff.models.openai import OpenAIChat
from signoff.models.scripted import ScriptedModel
from signoff.tools import tool
from tests.contract.models.test_model_adapters import BARE_CALL, HAIKU, PING, STEP1, STEP2
from tests.fixtures.recorded import MODEL_FIXTURES, bedrock_runtime_client
from tests.support.agents import answer, engine, make_agent, run_turn
from tests.support.conversation_rules import anthropic_violations, openai_violations
from tests.support.converse_shapes import converse_problems
from tests.support.sdk_types import sdk_problems

if TYPE_CHECKING:
    from pathlib import Path

PROVIDERS = ("openai", "anthropic", "bedrock")


def render(provider: str, request: ModelRequest, *, model: str | None = None) -> dict[str, Any]:
    """What ``provider``'s adapter would send for ``request`` (nothing is sent)."""
    if provider == "openai":
        return OpenAIChat(model=model or "gpt-4o-mini", client=httpx.Client()).request_body(request)
    if provider == "anthropic":
        adapter = AnthropicMessages(model=model or "claude-sonnet-4-5", client=httpx.Client())
        return adapter.request_body(request)
    bedrock = BedrockConverse(
        model or "us.anthropic.claude-sonnet-4-5-20250929-v1:0", bedrock_runtime_client()
    )
    return bedrock.request_params(request)


def problems(provider: str, rendered: dict[str, Any]) -> list[str]:
    """Every rule of ``provider`` that ``rendered`` breaks."""
    if provider == "openai":
        return sdk_problems(rendered, CompletionCreateParamsNonStreaming) + openai_violations(
            rendered
        )
    if provider == "anthropic":
        return sdk_problems(rendered, MessageCreateParamsNonStreaming) + anthropic_violations(
            rendered
        )
    return converse_problems(rendered)


# --- the shared conversation -----------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    "request_",
    [STEP1, STEP2, BARE_CALL, HAIKU, PING],
    ids=["step1", "step2", "bare_call", "haiku", "ping"],
)
def test_the_shared_conversation_is_valid(provider: str, request_: ModelRequest) -> None:
    assert problems(provider, render(provider, request_)) == []


def test_an_o_series_request_is_valid() -> None:
    adapter = OpenAIChat(model="o4-mini", client=httpx.Client(), reasoning_effort="medium")

    body = adapter.request_body(STEP2)

    assert body["max_completion_tokens"] == STEP2.max_tokens
    assert problems("openai", body) == []


# --- every request of an engine turn ---------------------------------------------------------


@tool(safe=True)
def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    if city == "Atlantis":
        raise LookupError("no such city")
    return {"city": city, "temp_c": 18}


def engine_requests() -> list[ModelRequest]:
    """The requests a turn sends through parallel calls, a failure, corrections and an answer."""

    def call(call_id: str, **args: Any) -> ToolCall:
        return ToolCall(id=call_id, name="get_weather", args=args)

    replies = [
        ModelResponse(
            text="Checking both.",
            tool_calls=(call("call_1", city="Paris"), call("call_2", city="Atlantis")),
            stop="tool_use",
        ),
        ModelResponse(  # arguments that were not JSON, beside a good sibling
            tool_calls=(
                ToolCall(id="call_3", name="get_weather", args={"_raw": '{"city": "Oslo"'}),
                call("call_4", city="Lyon"),
            ),
            stop="malformed_tool_use",
        ),
        ModelResponse(tool_calls=(call("call_5", city="Oslo"),), stop="tool_use"),
        ModelResponse(text="Let me retry.", stop="malformed_tool_use"),  # no readable call
        ModelResponse(tool_calls=(call("call_6", city="Os"),), stop="max_tokens"),  # cut call
        answer("Paris 18 °C, Oslo 18 °C; Atlantis is unknown."),
    ]
    seen: list[ModelRequest] = []

    def respond(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        return replies.pop(0)

    finished, _ = run_turn(
        engine(make_agent(get_weather), ScriptedModel(respond)), "Weather in Paris and Oslo?"
    )
    assert finished.text.startswith("Paris")
    return seen


ENGINE_REQUESTS = engine_requests()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    "request_", ENGINE_REQUESTS, ids=[f"call{i}" for i in range(len(ENGINE_REQUESTS))]
)
def test_every_request_of_an_engine_turn_is_valid(provider: str, request_: ModelRequest) -> None:
    assert problems(provider, render(provider, request_)) == []


# --- every recorded request ------------------------------------------------------------------


def recorded(provider: str) -> list[Path]:
    return sorted((MODEL_FIXTURES / provider).glob("*.json"))


@pytest.mark.parametrize(
    ("provider", "path"),
    [(p, path) for p in PROVIDERS for path in recorded(p)],
    ids=lambda value: value.stem if hasattr(value, "stem") else str(value),
)
def test_every_recorded_request_is_valid(provider: str, path: Path) -> None:
    exchange = json.loads(path.read_text(encoding="utf-8"))

    assert problems(provider, exchange["request"]["json"]) == []


# --- the checks bite -------------------------------------------------------------------------


def _openai(**changes: Any) -> dict[str, Any]:
    return {**render("openai", PING), **changes}


def _anthropic(**changes: Any) -> dict[str, Any]:
    return {**render("anthropic", PING), **changes}


def _converse(**changes: Any) -> dict[str, Any]:
    return {**render("bedrock", STEP1), **changes}


TOOL = {"name": "get weather!", "description": "d", "inputSchema": {"json": {}}}
USE = {"toolUseId": "call_1", "name": "get_weather", "input": {}}
RESULT = {"toolUseId": "call_1", "content": [{"text": "18 °C"}]}


@pytest.mark.parametrize(
    ("provider", "request_", "expected"),
    [
        ("openai", _openai(max_tokens="64"), "max_tokens"),
        ("openai", _openai(reasoning_effort="extreme"), "reasoning_effort"),
        ("openai", _openai(temprature=0.2), "temprature: not a field"),
        (
            "openai",
            _openai(messages=[{"role": "user", "content": "hi", "name": 3}]),
            "messages.0.ChatCompletionUserMessageParam.name",
        ),
        ("anthropic", _anthropic(system=[{"type": "text"}]), "system.0.text: Field required"),
        (
            "anthropic",
            _anthropic(
                messages=[{"role": "user", "content": [{"type": "text", "text": "hi", "x": 1}]}]
            ),
            "x: not a field of TextBlockParam",
        ),
        (
            "anthropic",
            _anthropic(messages=[{"role": "assistant", "content": "hi"}]),
            "must start with a user message",
        ),
        # What botocore's own ParamValidator lets through, and the service refuses:
        ("bedrock", _converse(toolConfig={"tools": [{"toolSpec": TOOL}]}), "does not match"),
        (
            "bedrock",
            _converse(toolConfig={"tools": [{"toolSpec": {**TOOL, "name": "t" * 65}}]}),
            "over the maximum 64",
        ),
        (
            "bedrock",
            _converse(
                messages=[
                    *_converse()["messages"],
                    {"role": "assistant", "content": [{"toolUse": USE}]},
                    {"role": "user", "content": [{"toolResult": {**RESULT, "status": "ok"}}]},
                ]
            ),
            "'ok' is not one of ['success', 'error']",
        ),
        ("bedrock", _converse(modelId="not a model id!"), "does not match"),
        (
            "bedrock",
            _converse(messages=[{"role": "assistant", "content": [{"text": "hi"}]}]),
            "must start with a user message",
        ),
        ("bedrock", _converse(inferenceConfig={"maxTokens": 0}), "valid min value: 1"),
    ],
)
def test_the_checks_refuse_what_the_provider_refuses(
    provider: str, request_: dict[str, Any], expected: str
) -> None:
    found = problems(provider, request_)

    assert any(expected in problem for problem in found), found


# --- every recorded reply is one the SDKs can read -------------------------------------------


def replies(provider: str) -> list[Path]:
    """The recorded exchanges of ``provider`` that end in a 200 reply."""
    return [
        path
        for path in recorded(provider)
        if json.loads(path.read_text(encoding="utf-8")).get("response", {}).get("status") == 200
    ]


@pytest.mark.parametrize(
    ("provider", "path"),
    [(p, path) for p in ("openai", "anthropic") for path in replies(p)],
    ids=lambda value: value.stem if hasattr(value, "stem") else str(value),
)
def test_every_recorded_reply_is_a_valid_sdk_response(provider: str, path: Path) -> None:
    # Converse replies go through botocore's Stubber, which checks the output shape.
    from anthropic.types import Message
    from openai.types.chat import ChatCompletion

    reply = json.loads(path.read_text(encoding="utf-8"))["response"]["json"]
    kind = ChatCompletion if provider == "openai" else Message

    kind.model_validate(reply, strict=True)
