"""The conversation-rule checkers catch what each provider refuses, so tests using them can fail."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.conversation_rules import (
    anthropic_violations,
    converse_violations,
    openai_violations,
)


def converse(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"modelId": "m", "system": [{"text": "Be brief."}], "messages": list(messages)}


def said(role: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": list(blocks)}


USE = {"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}
RESULT = {"toolResult": {"toolUseId": "t1", "content": [{"text": "ok"}], "status": "success"}}
HI = {"text": "hi"}


def test_a_valid_converse_conversation_passes() -> None:
    params = converse(said("user", HI), said("assistant", USE), said("user", RESULT))

    assert converse_violations(params) == []


@pytest.mark.parametrize(
    ("messages", "rule"),
    [
        ([said("assistant", HI), said("user", HI)], "must start with a user message"),
        ([said("user", HI), said("user", HI)], "roles must alternate"),
        ([said("user", HI), said("assistant", USE), said("user", HI)], "have no result"),
        ([said("user", HI), said("assistant", HI), said("user", RESULT)], "answer no tool use"),
        ([said("user", {"text": " "})], "blank text"),
        ([said("user", HI), said("assistant", HI)], "end with a user message"),
        ([said("user", HI), said("assistant", USE, USE), said("user", RESULT)], "used twice"),
        ([said("user", HI, {"text": "a", "toolUse": {}})], "exactly one member"),
    ],
)
def test_converse_violations(messages: list[dict[str, Any]], rule: str) -> None:
    assert any(rule in broken for broken in converse_violations(converse(*messages)))


def test_anthropic_wants_tool_results_first_in_their_user_message() -> None:
    use = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
    text = {"type": "text", "text": "and now?"}
    body = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [text, result]},
        ]
    }

    assert any("must come first" in broken for broken in anthropic_violations(body))
    body["messages"][2]["content"] = [result, text]
    assert anthropic_violations(body) == []


def test_openai_wants_every_tool_call_answered_right_after_it() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ask = {"role": "user", "content": "hi"}
    calls = {"role": "assistant", "content": None, "tool_calls": [call]}
    answer = {"role": "tool", "tool_call_id": "c1", "content": "ok"}

    assert openai_violations({"messages": [ask, calls, answer]}) == []
    assert any(
        "must be followed by tool messages" in broken
        for broken in openai_violations({"messages": [ask, calls, ask, answer]})
    )
    assert any(
        "must be a response to a preceding" in broken
        for broken in openai_violations({"messages": [ask, answer]})
    )
