"""A provider's unusual reply, through its adapter and the engine, to the turn's outcome.

Black-box rows of the stop table (docs/models.md): the reply is what the
provider sends, the assertion is what the turn ends with.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from botocore.stub import Stubber

from signoff.errors import ModelRejected
from signoff.events import LoopDone
from signoff.models.anthropic import AnthropicMessages
from signoff.models.bedrock import BedrockConverse
from signoff.models.openai import OpenAIChat
from signoff.tools import tool
from tests.fixtures.recorded import bedrock_runtime_client
from tests.support.agents import engine, make_agent, run_turn

RAN: list[str] = []


@tool(safe=True)
def get_weather(city: str) -> str:
    """Current weather for a city."""
    RAN.append(city)
    return f"{city}: sunny"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def replying(*replies: dict[str, Any]) -> tuple[httpx.MockTransport, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []
    queue = list(replies)

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=queue.pop(0))

    return httpx.MockTransport(answer), sent


def openai(message: dict[str, Any], finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_795_996_800,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason,
                "message": {"role": "assistant", "content": None, "refusal": None, **message},
            }
        ],
    }


def anthropic(stop_reason: str, *content: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": list(content),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def test_an_openai_refusal_is_the_answer() -> None:
    transport, _ = replying(openai({"refusal": "I can't help with that."}))
    model = OpenAIChat.from_settings(model="gpt-4o-mini", transport=transport)

    finished, events = run_turn(engine(make_agent(get_weather), model), "help me")

    assert finished.text == "I can't help with that."
    done = [e for e in events if isinstance(e, LoopDone)]
    assert [e.model_dump(by_alias=True, exclude_none=True) for e in done] == [
        {"type": "loop:done", "text": "I can't help with that.", "refused": "refusal"}
    ]


def test_openai_arguments_that_are_not_json_go_back_to_the_model() -> None:
    bad = {
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"'},
            }
        ]
    }
    transport, sent = replying(
        openai(bad, "tool_calls"), openai({"content": "Let me fix that."}, "stop")
    )
    model = OpenAIChat.from_settings(model="gpt-4o-mini", transport=transport)

    finished, _ = run_turn(engine(make_agent(get_weather), model), "weather in Oslo?")

    assert finished.text == "Let me fix that."
    assert RAN == []
    result = sent[1]["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call_1"
    assert "not a JSON object" in result["content"]
    assert '{"city": "Oslo"' in result["content"]


def test_an_anthropic_tool_use_cut_at_max_tokens_is_not_run() -> None:
    cut = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Os"}}
    transport, sent = replying(
        anthropic("max_tokens", cut), anthropic("end_turn", {"type": "text", "text": "Done."})
    )
    model = AnthropicMessages.from_settings(model="claude-sonnet-4-5", transport=transport)

    finished, _ = run_turn(engine(make_agent(get_weather), model), "weather in Oslo?")

    assert RAN == []
    assert finished.text == "Done."
    result = sent[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "cut off" in result["content"]


def test_an_anthropic_refusal_without_text_says_so() -> None:
    transport, _ = replying(anthropic("refusal"))
    model = AnthropicMessages.from_settings(model="claude-sonnet-4-5", transport=transport)

    finished, _ = run_turn(engine(make_agent(get_weather), model), "help me")

    assert finished.text == "The model declined to answer."


@pytest.mark.parametrize(
    ("stop_reason", "text", "answer"),
    [
        ("content_filtered", None, "The answer was withheld by the provider's content filter."),
        ("guardrail_intervened", "Blocked by policy.", "Blocked by policy."),
    ],
)
def test_a_bedrock_filter_or_guardrail_is_the_answer(
    stop_reason: str, text: str | None, answer: str
) -> None:
    client = bedrock_runtime_client()
    with Stubber(client) as stubber:
        stubber.add_response(
            "converse",
            {
                "output": {
                    "message": {"role": "assistant", "content": [{"text": text}] if text else []}
                },
                "stopReason": stop_reason,
                "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
                "metrics": {"latencyMs": 90},
            },
        )
        model = BedrockConverse("amazon.nova-lite-v1:0", client)

        finished, events = run_turn(engine(make_agent(get_weather), model), "help me")

    assert finished.text == answer
    done = [e for e in events if isinstance(e, LoopDone)]
    assert [e.model_dump(exclude_none=True).get("refused") for e in done] == [stop_reason]


def test_a_bedrock_malformed_tool_use_goes_back_to_the_model() -> None:
    client = bedrock_runtime_client()
    usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    with Stubber(client) as stubber:
        for reason, content in (
            ("malformed_tool_use", []),
            ("end_turn", [{"text": "Sorry, retrying failed."}]),
        ):
            stubber.add_response(
                "converse",
                {
                    "output": {"message": {"role": "assistant", "content": content}},
                    "stopReason": reason,
                    "usage": usage,
                    "metrics": {"latencyMs": 90},
                },
            )
        model = BedrockConverse("amazon.nova-lite-v1:0", client)

        finished, _ = run_turn(engine(make_agent(get_weather), model), "weather in Oslo?")

    assert finished.text == "Sorry, retrying failed."


def test_a_reasoning_model_that_spends_its_limit_thinking_is_an_error() -> None:
    # o-series: finish_reason "length" with empty content when reasoning used every token
    transport, _ = replying(openai({"content": ""}, "length"))
    model = OpenAIChat.from_settings(model="o4-mini", transport=transport)

    with pytest.raises(ModelRejected, match="without answering"):
        run_turn(engine(make_agent(get_weather), model), "think hard")
