"""Every stop reason of every provider, as the adapter reads it (the provider half of the table).

Each row is a reply built with the provider's own response type — the ``openai``
SDK's ``ChatCompletion``, the ``anthropic`` SDK's ``Message``, a Converse reply
that botocore's Stubber checks against the service's output shape — and the stop
signoff reads from it. What each stop then does to a turn is
``tests/unit/engine/test_engine_stops.py``; docs/models.md has both halves as one table.
A reason a provider's types know and no row covers fails
``test_every_stop_reason_has_a_row``.
"""

from __future__ import annotations

from typing import Any, get_args

import httpx
import pytest
from anthropic.types import Message
from anthropic.types import TextBlock as AnthropicText
from anthropic.types import ToolUseBlock as AnthropicToolUse
from anthropic.types import Usage as AnthropicUsage
from botocore.stub import Stubber
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionMessage
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_message_function_tool_call import (
    ChatCompletionMessageFunctionToolCall,
    Function,
)

from signoff.messages import ModelRequest, Stop, ToolCall, UserMessage
from signoff.models.anthropic import AnthropicMessages
from signoff.models.bedrock import BedrockConverse
from signoff.models.openai import OpenAIChat
from tests.fixtures.recorded import bedrock_runtime_client

ASK = ModelRequest(system="Be brief.", messages=(UserMessage(content="Weather in Oslo?"),))
OSLO = ToolCall(id="call_oslo", name="get_weather", args={"city": "Oslo"})


# --- OpenAI chat completions -----------------------------------------------------------------


def openai_reply(
    finish_reason: Any,
    content: str | None,
    *,
    refusal: str | None = None,
    arguments: str | None = None,
) -> dict[str, Any]:
    calls = (
        [
            ChatCompletionMessageFunctionToolCall(
                id="call_oslo",
                type="function",
                function=Function(name="get_weather", arguments=arguments),
            )
        ]
        if arguments is not None
        else None
    )
    completion = ChatCompletion(
        id="chatcmpl-1",
        object="chat.completion",
        created=1_795_996_800,
        model="gpt-4o-mini",
        choices=[
            Choice(
                index=0,
                finish_reason=finish_reason,
                message=ChatCompletionMessage(
                    role="assistant", content=content, refusal=refusal, tool_calls=calls
                ),
            )
        ],
        usage=CompletionUsage(prompt_tokens=12, completion_tokens=3, total_tokens=15),
    )
    return completion.model_dump(mode="json")


OPENAI_ROWS: list[tuple[str, dict[str, Any], Stop, str, tuple[ToolCall, ...]]] = [
    ("stop", openai_reply("stop", "Sunny."), "end", "Sunny.", ()),
    ("length", openai_reply("length", "Sunny and"), "max_tokens", "Sunny and", ()),
    (
        "tool_calls",
        openai_reply("tool_calls", None, arguments='{"city": "Oslo"}'),
        "tool_use",
        "",
        (OSLO,),
    ),
    (
        "stop with tool calls (older Ollama)",
        openai_reply("stop", None, arguments='{"city": "Oslo"}'),
        "tool_use",
        "",
        (OSLO,),
    ),
    (
        "tool_calls with arguments that are not JSON",
        openai_reply("tool_calls", None, arguments='{"city": "Oslo"'),
        "malformed_tool_use",
        "",
        (ToolCall(id="call_oslo", name="get_weather", args={"_raw": '{"city": "Oslo"'}),),
    ),
    (
        "length cutting a tool call",
        openai_reply("length", None, arguments='{"city": "Os'),
        "max_tokens",
        "",
        (ToolCall(id="call_oslo", name="get_weather", args={"_raw": '{"city": "Os'}),),
    ),
    ("content_filter", openai_reply("content_filter", None), "content_filtered", "", ()),
    (
        "refusal",
        openai_reply("stop", None, refusal="I can't help with that."),
        "refusal",
        "I can't help with that.",
        (),
    ),
    # signoff offers tools, never the deprecated functions: read as a plain end.
    ("function_call", openai_reply("function_call", "Hm."), "end", "Hm.", ()),
]


@pytest.mark.parametrize(
    ("reply", "stop", "text", "calls"),
    [row[1:] for row in OPENAI_ROWS],
    ids=[row[0] for row in OPENAI_ROWS],
)
def test_openai_stop_reasons(
    reply: dict[str, Any], stop: Stop, text: str, calls: tuple[ToolCall, ...]
) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=reply))
    model = OpenAIChat.from_settings(model="gpt-4o-mini", transport=transport)

    got = model(ASK)

    assert (got.stop, got.text, got.tool_calls) == (stop, text, calls)


# --- Anthropic messages ----------------------------------------------------------------------


def anthropic_reply(stop_reason: Any, *blocks: AnthropicText | AnthropicToolUse) -> dict[str, Any]:
    message = Message(
        id="msg_1",
        type="message",
        role="assistant",
        model="claude-sonnet-4-5",
        content=list(blocks),
        stop_reason=stop_reason,
        stop_sequence="###" if stop_reason == "stop_sequence" else None,
        usage=AnthropicUsage(input_tokens=12, output_tokens=3),
    )
    return message.model_dump(mode="json")


SUNNY = AnthropicText(type="text", text="Sunny.")
OSLO_USE = AnthropicToolUse(
    type="tool_use", id="call_oslo", name="get_weather", input={"city": "Oslo"}
)

ANTHROPIC_ROWS: list[tuple[str, dict[str, Any], Stop, str, tuple[ToolCall, ...]]] = [
    ("end_turn", anthropic_reply("end_turn", SUNNY), "end", "Sunny.", ()),
    ("stop_sequence", anthropic_reply("stop_sequence", SUNNY), "end", "Sunny.", ()),
    ("max_tokens", anthropic_reply("max_tokens", SUNNY), "max_tokens", "Sunny.", ()),
    ("tool_use", anthropic_reply("tool_use", OSLO_USE), "tool_use", "", (OSLO,)),
    (
        "max_tokens cutting a tool use",
        anthropic_reply("max_tokens", OSLO_USE),
        "max_tokens",
        "",
        (OSLO,),
    ),
    # Only server tools pause a turn, and signoff offers none: read as a plain end.
    ("pause_turn", anthropic_reply("pause_turn", SUNNY), "end", "Sunny.", ()),
    ("refusal", anthropic_reply("refusal"), "refusal", "", ()),
    (
        "model_context_window_exceeded",
        anthropic_reply("model_context_window_exceeded", SUNNY),
        "context_window_exceeded",
        "Sunny.",
        (),
    ),
    ("no stop reason", anthropic_reply(None, SUNNY), "end", "Sunny.", ()),
]


@pytest.mark.parametrize(
    ("reply", "stop", "text", "calls"),
    [row[1:] for row in ANTHROPIC_ROWS],
    ids=[row[0] for row in ANTHROPIC_ROWS],
)
def test_anthropic_stop_reasons(
    reply: dict[str, Any], stop: Stop, text: str, calls: tuple[ToolCall, ...]
) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=reply))
    model = AnthropicMessages.from_settings(model="claude-sonnet-4-5", transport=transport)

    got = model(ASK)

    assert (got.stop, got.text, got.tool_calls) == (stop, text, calls)


# --- Bedrock Converse ------------------------------------------------------------------------


def converse_reply(stop_reason: str, *content: dict[str, Any]) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": list(content)}},
        "stopReason": stop_reason,
        "usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15},
        "metrics": {"latencyMs": 120},
    }


TEXT = {"text": "Sunny."}
USE = {"toolUse": {"toolUseId": "call_oslo", "name": "get_weather", "input": {"city": "Oslo"}}}

CONVERSE_ROWS: list[tuple[str, dict[str, Any], Stop, str, tuple[ToolCall, ...]]] = [
    ("end_turn", converse_reply("end_turn", TEXT), "end", "Sunny.", ()),
    ("stop_sequence", converse_reply("stop_sequence", TEXT), "end", "Sunny.", ()),
    ("tool_use", converse_reply("tool_use", USE), "tool_use", "", (OSLO,)),
    ("max_tokens", converse_reply("max_tokens", TEXT), "max_tokens", "Sunny.", ()),
    ("max_tokens cutting a tool use", converse_reply("max_tokens", USE), "max_tokens", "", (OSLO,)),
    (
        "guardrail_intervened",
        converse_reply("guardrail_intervened", {"text": "Sorry, the model cannot answer."}),
        "guardrail_intervened",
        "Sorry, the model cannot answer.",
        (),
    ),
    ("content_filtered", converse_reply("content_filtered"), "content_filtered", "", ()),
    ("malformed_tool_use", converse_reply("malformed_tool_use"), "malformed_tool_use", "", ()),
    (
        "malformed_tool_use with the call",
        converse_reply("malformed_tool_use", USE),
        "malformed_tool_use",
        "",
        (OSLO,),
    ),
    (
        "malformed_model_output",
        converse_reply("malformed_model_output", TEXT),
        "malformed_tool_use",
        "Sunny.",
        (),
    ),
    (
        "model_context_window_exceeded",
        converse_reply("model_context_window_exceeded", TEXT),
        "context_window_exceeded",
        "Sunny.",
        (),
    ),
]


@pytest.mark.parametrize(
    ("reply", "stop", "text", "calls"),
    [row[1:] for row in CONVERSE_ROWS],
    ids=[row[0] for row in CONVERSE_ROWS],
)
def test_bedrock_stop_reasons(
    reply: dict[str, Any], stop: Stop, text: str, calls: tuple[ToolCall, ...]
) -> None:
    client = bedrock_runtime_client()
    with Stubber(client) as stubber:
        # The Stubber checks the reply against Converse's output shape.
        stubber.add_response("converse", reply)
        got = BedrockConverse("amazon.nova-lite-v1:0", client)(ASK)

    assert (got.stop, got.text, got.tool_calls) == (stop, text, calls)


# --- the table is complete -------------------------------------------------------------------


def test_every_stop_reason_has_a_row() -> None:
    import botocore.session

    converse = botocore.session.get_session().get_service_model("bedrock-runtime")
    known = {
        "openai": set(get_args(Choice.model_fields["finish_reason"].annotation)) | {"refusal"},
        "anthropic": set(get_args(get_args(Message.model_fields["stop_reason"].annotation)[0])),
        "bedrock": set(converse.shape_for("StopReason").enum),
    }
    covered = {
        "openai": {_reason(row) for row in OPENAI_ROWS},
        "anthropic": {_reason(row) for row in ANTHROPIC_ROWS},
        "bedrock": {_reason(row) for row in CONVERSE_ROWS},
    }

    for provider, reasons in known.items():
        assert reasons <= covered[provider], f"{provider}: no row for {reasons - covered[provider]}"


def _reason(row: tuple[str, dict[str, Any], Stop, str, tuple[ToolCall, ...]]) -> str:
    return row[0].split(" ")[0]


def test_every_stop_signoff_knows_is_reached() -> None:
    reached = {row[2] for rows in (OPENAI_ROWS, ANTHROPIC_ROWS, CONVERSE_ROWS) for row in rows}

    assert reached == set(get_args(Stop))
