"""What a turn does with each way a reply can end (the engine's half of the stop table).

The adapters name every provider's stop reason in our words (``messages.Stop``;
``tests/contract/models/test_model_stops.py`` holds the provider half); these rows say
what each of those words does to a turn.
"""

from __future__ import annotations

from typing import Any

import pytest

from signoff.errors import ModelRejected
from signoff.events import LoopDone, ToolResult
from signoff.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    Stop,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from signoff.models.scripted import ScriptedModel
from signoff.tools import tool
from tests.support.agents import answer, engine, make_agent, playing, run_turn, types

RAN: list[dict[str, Any]] = []


@tool(safe=True)
def lookup(city: str) -> str:
    """Look a city up."""
    RAN.append({"city": city})
    return f"{city}: sunny"


def reply(stop: Stop, text: str = "", *calls: ToolCall) -> ModelResponse:
    return ModelResponse(text=text, tool_calls=calls, stop=stop)


def recording(*responses: ModelResponse) -> tuple[ScriptedModel, list[ModelRequest]]:
    seen: list[ModelRequest] = []
    queue = list(responses)

    def respond(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        return queue.pop(0) if queue else answer("done")

    return ScriptedModel(respond), seen


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


# --- refusals: the provider's words are the answer, marked ----------------------------------


@pytest.mark.parametrize(
    ("stop", "text", "answer_text"),
    [
        ("refusal", "I can't help with that.", "I can't help with that."),
        ("refusal", "", "The model declined to answer."),
        ("content_filtered", "", "The answer was withheld by the provider's content filter."),
        ("guardrail_intervened", "Sorry, blocked by policy.", "Sorry, blocked by policy."),
    ],
)
def test_a_refusal_is_the_answer_marked_refused(stop: Stop, text: str, answer_text: str) -> None:
    # Given a model that declines (even alongside a tool call it started)
    cut = ToolCall(id="c1", name="lookup", args={"city": "Oslo"})
    eng = engine(make_agent(lookup), playing(reply(stop, text, cut)))

    finished, events = run_turn(eng, "help me")

    # Then the turn ends with the refusal as its answer, marked, and nothing ran
    assert finished.text == answer_text
    done = [e for e in events if isinstance(e, LoopDone)]
    assert done == [LoopDone(text=answer_text, refused=stop)]  # type: ignore[arg-type]
    assert types(events)[-2:] == ["loop:done", "done"]
    assert RAN == []


def test_a_normal_answer_carries_no_refusal_mark() -> None:
    eng = engine(make_agent(lookup), playing(answer("All good.")))

    _, events = run_turn(eng)

    assert [e for e in events if isinstance(e, LoopDone)] == [LoopDone(text="All good.")]


# --- unreadable tool calls: an error the model can correct, a bounded number of times -------


def test_invalid_arguments_are_reported_to_the_model_and_corrected() -> None:
    # Given a model whose first call's arguments were not JSON, then a good call
    bad = ToolCall(id="c1", name="lookup", args={"_raw": '{"city": "Oslo"'})
    sibling = ToolCall(id="c2", name="lookup", args={"city": "Lyon"})
    good = ToolCall(id="c3", name="lookup", args={"city": "Oslo"})
    model, seen = recording(
        reply("malformed_tool_use", "", bad, sibling),
        reply("tool_use", "", good),
        answer("Oslo is sunny."),
    )
    eng = engine(make_agent(lookup), model)

    finished, events = run_turn(eng, "weather in Oslo and Lyon?")

    # Then nothing of the malformed reply ran or was gated; each call got an error result
    assert finished.text == "Oslo is sunny."
    assert RAN == [{"city": "Oslo"}]
    second = seen[1].messages
    assert second[1] == AssistantMessage(tool_calls=(bad, sibling))
    results = [m for m in second[2:] if isinstance(m, ToolResultMessage)]
    assert [(r.call_id, r.is_error) for r in results] == [("c1", True), ("c2", True)]
    assert '{"city": "Oslo"' in results[0].content
    assert "not a JSON object" in results[0].content
    assert "another call" in results[1].content
    errors = [e for e in events if isinstance(e, ToolResult) and e.status_text == "Error."]
    assert [e.id for e in errors] == ["c1", "c2"]
    assert types(events).count("actauth:decision") == 1  # only the good call was gated


def test_calls_cut_at_the_output_limit_are_not_run() -> None:
    cut = ToolCall(id="c1", name="lookup", args={"city": "Os"})
    model, seen = recording(reply("max_tokens", "Checking", cut), answer("Asked again."))
    eng = engine(make_agent(lookup), model)

    finished, events = run_turn(eng)

    assert RAN == []
    assert finished.text == "Asked again."
    result = seen[1].messages[-1]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert "cut off at the output token limit" in result.content
    assert "assistant:text" in types(events)


def test_a_malformed_reply_without_calls_gets_a_correction_message() -> None:
    # Converse's malformed_tool_use may carry no readable toolUse block at all
    model, seen = recording(reply("malformed_tool_use", ""), answer("Fixed."))
    eng = engine(make_agent(lookup), model)

    finished, _ = run_turn(eng, "weather?")

    assert finished.text == "Fixed."
    retry = seen[1].messages
    assert retry[0] == UserMessage(content="weather?")
    assert isinstance(retry[-1], UserMessage)
    assert "could not be read" in retry[-1].content


def test_corrections_are_bounded() -> None:
    bad = [
        reply("malformed_tool_use", "", ToolCall(id=f"c{i}", name="lookup", args={"_raw": "{"}))
        for i in range(4)
    ]
    model, seen = recording(*bad)
    eng = engine(make_agent(lookup), model)

    with pytest.raises(ModelRejected, match="could not be read 3 times in a row"):
        run_turn(eng)

    assert len(seen) == 3
    assert RAN == []


def test_a_good_reply_resets_the_correction_count() -> None:
    def bad(i: int) -> ModelResponse:
        return reply(
            "malformed_tool_use", "", ToolCall(id=f"b{i}", name="lookup", args={"_raw": "{"})
        )

    def good(i: int) -> ModelResponse:
        return reply("tool_use", "", ToolCall(id=f"g{i}", name="lookup", args={"city": "Oslo"}))

    model, _ = recording(bad(1), bad(2), good(1), bad(3), bad(4), answer("done"))
    eng = engine(make_agent(lookup, max_turns=10), model)

    finished, _ = run_turn(eng)

    assert finished.text == "done"
    assert RAN == [{"city": "Oslo"}]


# --- max_tokens: cut text ends the turn as it stands ----------------------------------------


def test_text_cut_at_max_tokens_is_the_answer() -> None:
    # Recovering asks for the rest first (tests/unit/models/test_model_recovery.py); what is
    # still cut after that is the answer as it stands.
    eng = engine(make_agent(lookup), playing(reply("max_tokens", "Soft rain on the roof,")))

    finished, events = run_turn(eng)

    assert finished.text == "Soft rain on the roof,"
    assert [e for e in events if isinstance(e, LoopDone)] == [
        LoopDone(text="Soft rain on the roof,")
    ]


# --- a full context window: compact and ask again ------------------------------------------


def test_a_context_window_stop_compacts_and_asks_again() -> None:
    history: list[Any] = []
    for i in range(6):
        history += [
            UserMessage(content=f"question {i} " + "x" * 400),
            AssistantMessage(content="ok"),
        ]
    model, seen = recording(reply("context_window_exceeded", "Partial"), answer("Fits now."))
    eng = engine(make_agent(lookup), model)

    finished, events = run_turn(eng, "last question", history=history)

    assert finished.text == "Fits now."
    assert "prompt:compaction" in types(events)
    assert len(seen[1].messages) < len(seen[0].messages)
    assert "Partial" not in [getattr(m, "content", None) for m in seen[1].messages]


def test_the_cli_line_says_the_answer_is_a_refusal() -> None:
    from signoff_dev.render import render

    assert render(LoopDone(text="No.", refused="content_filtered")) == (
        "refused (content_filtered): the answer is a refusal, not a finished task"
    )
    assert render(LoopDone(text="Done.")) is None


def test_an_output_limit_spent_before_any_answer_is_an_error() -> None:
    # A reasoning model that thought through its whole max_completion_tokens
    eng = engine(make_agent(lookup), playing(reply("max_tokens", "")), max_tokens=256)

    with pytest.raises(ModelRejected, match=r"whole output limit \(maxTokens 256\)"):
        run_turn(eng)
