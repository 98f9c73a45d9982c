"""Compaction keeps a conversation every provider accepts, and the task the model works on.

Long conversations with parallel tool calls and tool errors are compacted at random
budgets and rendered by each adapter (OpenAI, Anthropic, Bedrock Converse); every
rendering must satisfy its provider's conversation rules (tests/support/
conversation_rules.py). A long turn of the scripted model over its hard budget,
rendered for Bedrock, must validate on every call and finish.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from botocore.validate import ParamValidator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff.agents.config import BudgetSettings
from signoff.budget import compact, estimate_tokens, is_omission_note, omission_note, window
from signoff.errors import PromptTooLong
from signoff.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from signoff.models.anthropic import AnthropicMessages
from signoff.models.bedrock import BedrockConverse
from signoff.models.openai import OpenAIChat
from signoff.models.scripted import ScriptedModel
from signoff.tools import tool
from tests.fixtures.recorded import bedrock_runtime_client
from tests.support.agents import answer, calls, engine, make_agent, run_turn, types
from tests.support.conversation_rules import assert_valid, converse_violations

if TYPE_CHECKING:
    from signoff.events import PromptCompaction

SYSTEM = "You help customers with their orders."
TASK = "Refund every order of customer 42 that arrived damaged."

_BEDROCK_CLIENT = bedrock_runtime_client()
ADAPTERS = {
    "openai": OpenAIChat(model="gpt-4o-mini", client=httpx.Client()).request_body,
    "anthropic": AnthropicMessages(model="claude-sonnet-4-5", client=httpx.Client()).request_body,
    "bedrock": BedrockConverse("amazon.nova-lite-v1:0", _BEDROCK_CLIENT).request_params,
}
_CONVERSE_INPUT = _BEDROCK_CLIENT.meta.service_model.operation_model("Converse").input_shape


def render_all(system: str, messages: list[Message]) -> None:
    """Renders ``messages`` with every adapter and checks every provider's rules."""
    request = ModelRequest(system=system, messages=tuple(messages), max_tokens=256)
    for provider, render in ADAPTERS.items():
        assert_valid(provider, render(request))


def validate_converse(params: dict[str, Any]) -> None:
    """botocore's own parameter validation (types, required members, lengths) plus the rules."""
    report = ParamValidator().validate(params, _CONVERSE_INPUT)
    assert not report.has_errors(), report.generate_report()
    assert converse_violations(params) == []


# --- long conversations, compacted at random budgets --------------------------------------

WORDS = st.text(alphabet="abcdefgh xyz", min_size=1, max_size=80).filter(str.strip)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """A task, then turns of answers, new user messages and parallel tool calls with errors.

    It ends as the engine calls a model: after a user message or a batch of results.
    """
    history: list[Message] = [UserMessage(content=TASK)]
    units = draw(st.lists(st.sampled_from("uat"), min_size=1, max_size=24))
    units.append(draw(st.sampled_from("ut")))
    for number, unit in enumerate(units):
        if unit == "u":
            history.append(UserMessage(content=draw(WORDS)))
        elif unit == "a":
            history.append(AssistantMessage(content=draw(WORDS)))
        else:
            ids = [f"t{number}c{i}" for i in range(draw(st.integers(1, 4)))]
            text = draw(st.one_of(st.just(""), WORDS))
            history.append(
                AssistantMessage(
                    content=text,
                    tool_calls=tuple(
                        ToolCall(id=i, name="lookup", args={"order": i, "note": draw(WORDS)})
                        for i in ids
                    ),
                )
            )
            history.extend(
                ToolResultMessage(
                    call_id=i,
                    name="lookup",
                    content=draw(WORDS),
                    is_error=draw(st.booleans()),
                )
                for i in draw(st.permutations(ids))
            )
    return history


def originals(compacted: list[Message]) -> list[Message]:
    return [m for m in compacted if not is_omission_note(m)]


def call_ids(messages: list[Message]) -> set[str]:
    return {c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}


def result_ids(messages: list[Message]) -> set[str]:
    return {m.call_id for m in messages if isinstance(m, ToolResultMessage)}


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=conversations(), data=st.data())
def test_compaction_keeps_every_provider_rule_and_the_task(
    history: list[Message], data: st.DataObject
) -> None:
    full = estimate_tokens(SYSTEM, history)
    target = data.draw(st.integers(0, full + 10), label="target")

    compacted = compact(history, system=SYSTEM, target_tokens=target)

    render_all(SYSTEM, compacted)
    kept = originals(compacted)
    # The task, the newest user message and the newest message stay, in order.
    newest_user = [m for m in history if isinstance(m, UserMessage)][-1]
    assert compacted[0] == history[0]
    assert newest_user in kept
    assert compacted[-1] == history[-1]
    positions = [next(i for i, h in enumerate(history) if h is m) for m in kept]
    assert positions == sorted(positions)
    # Tool calls and their results stay together, parallel calls included.
    assert call_ids(kept) == result_ids(kept)
    # The notes count exactly what went, in the right number.
    notes = [m for m in compacted if is_omission_note(m)]
    counts = [int(m.content.split()[0].strip("[")) for m in notes]
    assert [omission_note(count) for count in counts] == notes
    assert len(kept) + sum(counts) == len(history)
    if full <= target:
        assert compacted == history
        return
    # Over target: the longest window that fits without splitting a call, or else the
    # smallest one that does not split any.
    candidates = [window(history, cut) for cut in range(1, len(history))]
    unsplit = [
        w for w in candidates if is_unsplit(originals(w)) and len(originals(w)) < len(history)
    ]
    fitting = [w for w in unsplit if estimate_tokens(SYSTEM, w) <= target]
    if fitting:
        assert estimate_tokens(SYSTEM, compacted) <= target
        assert len(kept) == max(len(originals(w)) for w in fitting)
    elif unsplit:
        assert len(kept) == min(len(originals(w)) for w in unsplit)
    else:
        assert compacted == history


def is_unsplit(messages: list[Message]) -> bool:
    """No tool call without all its results, and no result without its call."""
    return call_ids(messages) == result_ids(messages)


def test_a_compacted_conversation_is_valid_for_every_provider_when_it_starts_with_an_answer() -> (
    None
):
    # Before the fix, the kept tail began with the assistant's message: Converse refuses
    # "A conversation must start with a user message", and the task was gone.
    history: list[Message] = [
        UserMessage(content=TASK),
        AssistantMessage(content="x" * 400, tool_calls=(ToolCall(id="c0", name="f"),)),
        ToolResultMessage(call_id="c0", name="f", content="y" * 400, is_error=True),
        AssistantMessage(content="Looking them up.", tool_calls=(ToolCall(id="c1", name="f"),)),
        ToolResultMessage(call_id="c1", name="f", content="found 2"),
    ]
    target = estimate_tokens(SYSTEM, [history[0], omission_note(2), *history[3:]])

    compacted = compact(history, system=SYSTEM, target_tokens=target)

    assert compacted == [history[0], omission_note(2), *history[3:]]
    render_all(SYSTEM, compacted)


def test_one_omitted_message_is_counted_in_the_singular() -> None:
    history: list[Message] = [
        UserMessage(content=TASK),
        AssistantMessage(content="z" * 800),
        UserMessage(content="and the order of customer 7?"),
    ]

    compacted = compact(history, system=SYSTEM, target_tokens=60)

    assert compacted == [history[0], omission_note(1), history[2]]
    assert compacted[1].content == "[1 earlier message was omitted to fit the context budget]"


def test_the_turns_task_is_kept_even_behind_a_newer_user_message() -> None:
    # The engine records where the turn's task is; a user message it adds later (a
    # correction for an unreadable tool call) must not take the task's place.
    history: list[Message] = [
        UserMessage(content="Hello"),
        AssistantMessage(content="Hi, how can I help?"),
        UserMessage(content=TASK),
        AssistantMessage(content="w" * 800),
        UserMessage(content="[signoff] Your last reply held a tool call that could not be read."),
        AssistantMessage(content="v" * 800),
        AssistantMessage(content="Refunding.", tool_calls=(ToolCall(id="c9", name="refund"),)),
        ToolResultMessage(call_id="c9", name="refund", content="refunded"),
    ]

    compacted = window(history, 6, task=2)

    assert compacted == [
        history[0],
        omission_note(1),
        history[2],
        omission_note(3),
        *history[6:],
    ]
    render_all(SYSTEM, compacted)


# --- the engine: a long turn over its hard budget, rendered for Bedrock --------------------


@tool(safe=True)
def lookup(order: int) -> dict[str, Any]:
    """Look an order up."""
    return {"order": order, "status": "damaged", "details": "d" * 2000}


@tool(safe=True)
def refund(order: int) -> str:
    """Refund an order; order 3 cannot be refunded."""
    if order == 3:
        raise RuntimeError("order 3 is already refunded")
    return f"refunded {order}"


def bedrock_checked(respond: Any, seen: list[dict[str, Any]]) -> ScriptedModel:
    """The scripted model behind a check of every request as Bedrock would receive it."""
    render = ADAPTERS["bedrock"]

    def checked(request: ModelRequest) -> ModelResponse:
        params = render(request)
        validate_converse(params)
        seen.append(params)
        return respond(request)  # type: ignore[no-any-return]

    return ScriptedModel(checked)


def first_user_text(params: dict[str, Any]) -> str:
    return str(params["messages"][0]["content"][0]["text"])


def test_a_long_turn_over_the_default_hard_budget_stays_valid_for_bedrock_and_finishes() -> None:
    seen: list[dict[str, Any]] = []
    steps = iter(range(1, 15))

    def respond(request: ModelRequest) -> ModelResponse:
        step = next(steps, None)
        if step is None:
            return answer("Refunded every damaged order I could.")
        # Two lookups and a refund in parallel; the refund of order 3 fails.
        return calls(
            ("lookup", {"order": step}),
            ("lookup", {"order": step + 100}),
            ("refund", {"order": step}),
            text="Checking the next orders." if step % 2 else "",
        )

    # The budget an agent.yaml without one gets: 8,000 tokens.
    agent = make_agent(lookup, refund, budget=BudgetSettings().tokens, max_turns=30)
    finished, events = run_turn(engine(agent, bedrock_checked(respond, seen)), TASK)

    assert finished.stop_reason is None
    assert finished.text == "Refunded every damaged order I could."
    checks = [e.action for e in events if e.type == "budget:check"]  # type: ignore[union-attr]
    assert "over_hard_limit" in checks
    compactions: list[PromptCompaction] = [
        e
        for e in events
        if e.type == "prompt:compaction"  # type: ignore[misc]
    ]
    assert compactions and all(c.to < c.from_ for c in compactions)
    # Every request, before and after compaction, began with the task.
    assert len(seen) == 15
    assert all(first_user_text(params) == TASK for params in seen)
    assert any("earlier messages were omitted" in str(params["messages"]) for params in seen)


def test_a_prompt_too_long_rejection_compacts_to_a_valid_bedrock_request() -> None:
    seen: list[dict[str, Any]] = []
    rejected: list[int] = []

    def respond(request: ModelRequest) -> ModelResponse:
        if len(request.messages) > 9 and not rejected:
            rejected.append(len(seen))  # where the retry will be seen
            raise PromptTooLong("Input is too long for requested model.", provider="bedrock")
        if len(seen) < 6:
            return calls(("lookup", {"order": len(seen)}), ("lookup", {"order": 50 + len(seen)}))
        return answer("done")

    finished, events = run_turn(
        engine(make_agent(lookup), bedrock_checked(respond, seen)), "x" * 40 + TASK
    )

    assert rejected and finished.text == "done"
    assert "prompt:compaction" in types(events)
    before, after = seen[rejected[0] - 1], seen[rejected[0]]
    assert len(after["messages"]) < len(before["messages"])
    assert first_user_text(after) == "x" * 40 + TASK
    assert after["messages"][0]["content"][1]["text"].endswith("omitted to fit the context budget]")


@pytest.mark.parametrize("trigger", ["rejection", "stop"])
def test_a_context_window_stop_compacts_and_retries_like_a_rejection(trigger: str) -> None:
    sizes: list[int] = []

    def respond(request: ModelRequest) -> ModelResponse:
        sizes.append(len(request.messages))
        if len(sizes) < 4:
            return calls(("lookup", {"order": len(sizes)}))
        if len(sizes) == 4:
            if trigger == "rejection":
                raise PromptTooLong("prompt is too long", provider="anthropic")
            return ModelResponse(text="Partial", stop="context_window_exceeded")
        return answer("all refunded")

    finished, events = run_turn(engine(make_agent(lookup), ScriptedModel(respond)), TASK)

    assert finished.text == "all refunded"
    assert "prompt:compaction" in types(events)
    assert sizes[4] < sizes[3]


def test_a_second_context_window_stop_after_compaction_is_prompt_too_long() -> None:
    made: list[int] = []

    def respond(request: ModelRequest) -> ModelResponse:
        made.append(len(request.messages))
        if len(made) < 4:
            return calls(("lookup", {"order": len(made)}))
        return ModelResponse(stop="context_window_exceeded")

    with pytest.raises(PromptTooLong, match="still full"):
        run_turn(engine(make_agent(lookup), ScriptedModel(respond)), TASK)


def test_anthropics_context_window_stop_compacts_through_the_adapter() -> None:
    bodies: list[dict[str, Any]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert_valid("anthropic", body)
        bodies.append(body)
        usage = {"input_tokens": 900, "output_tokens": 20}
        if len(bodies) <= 2:
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{len(bodies)}",
                    "name": "lookup",
                    "input": {"order": len(bodies)},
                }
            ]
            stop = "tool_use"
        elif len(bodies) == 3:
            content, stop = (
                [{"type": "text", "text": "Refunded ord"}],
                "model_context_window_exceeded",
            )
        else:
            content, stop = [{"type": "text", "text": "All refunded."}], "end_turn"
        return httpx.Response(
            200,
            json={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude",
                "content": content,
                "stop_reason": stop,
                "usage": usage,
            },
        )

    model = AnthropicMessages.from_settings(
        model="claude-sonnet-4-5", transport=httpx.MockTransport(reply)
    )
    finished, events = run_turn(engine(make_agent(lookup), model), TASK)  # type: ignore[arg-type]

    assert finished.text == "All refunded."
    assert "prompt:compaction" in types(events)
    assert len(bodies[3]["messages"]) < len(bodies[2]["messages"])
    assert bodies[3]["messages"][0]["content"][0]["text"] == TASK
