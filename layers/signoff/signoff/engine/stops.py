"""What a turn does with a reply that did not end normally.

The adapters give every provider's stop reason one of our names (``messages.Stop``);
here the engine's answer to each lives once:

- a refusal (the model's, a content filter's, a Bedrock guardrail's) is the turn's
  answer: what the provider said, or a sentence saying what happened, marked with
  ``loop:done``'s ``refused`` so nobody mistakes it for a finished task;
- tool calls that could not be read (malformed, or cut off at the output limit)
  are not gated or run: each gets an error result the model can act on, and the
  model is asked again, a bounded number of times in a row;
- a reply that used the whole output limit without a word or a call (a reasoning
  model that spent it thinking) fails the turn with a clear error instead of
  passing for an empty answer.

A context-window stop is the engine's budget to handle (it compacts, as for a
prompt-too-long rejection) and never reaches these functions before that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from signoff.events import tool_result
from signoff.messages import RAW_ARGUMENTS, AssistantMessage, ToolResultMessage, UserMessage

if TYPE_CHECKING:
    from signoff.events import ToolResult
    from signoff.messages import Message, ModelResponse, Refusal, ToolCall

__all__ = [
    "MAX_CORRECTIONS",
    "correction",
    "is_empty_cut",
    "is_unreadable",
    "refusal",
    "refusal_text",
]

# Replies in a row whose tool calls could not be read before the turn gives up: a model
# that fails three times on the same call is not going to fix it on the fourth.
MAX_CORRECTIONS: Final = 2

_REFUSED: Final[dict[Refusal, str]] = {
    "refusal": "The model declined to answer.",
    "content_filtered": "The answer was withheld by the provider's content filter.",
    "guardrail_intervened": "The answer was blocked by a guardrail.",
}
_RAW_SHOWN = 300  # characters of unreadable arguments echoed back to the model


def refusal(response: ModelResponse) -> Refusal | None:
    """The kind of refusal ``response`` is, or None for any other reply."""
    stop = response.stop
    if stop == "refusal" or stop == "content_filtered" or stop == "guardrail_intervened":
        return stop
    return None


def refusal_text(response: ModelResponse, kind: Refusal) -> str:
    """The turn's answer for a refusal: the provider's words, else what happened."""
    return response.text or _REFUSED[kind]


def is_unreadable(response: ModelResponse) -> bool:
    """Whether ``response``'s tool calls cannot be trusted to run as the model meant."""
    if response.stop == "malformed_tool_use":
        return True
    # Calls cut at the output limit may be missing arguments (or hold half of one).
    cut = response.stop in ("max_tokens", "context_window_exceeded")
    return cut and bool(response.tool_calls)


def is_empty_cut(response: ModelResponse) -> bool:
    """Whether ``response`` hit the output limit before saying or calling anything."""
    return response.stop == "max_tokens" and not response.text and not response.tool_calls


def correction(response: ModelResponse) -> tuple[list[Message], list[ToolResult]]:
    """The messages that tell the model its reply's calls were not run, and their events.

    With calls, the assistant message keeps them and each gets an error result (the
    providers want a result for every call). Without (Converse's ``malformed_tool_use``
    may hold no readable call at all), a user message says what went wrong.
    """
    calls = response.tool_calls
    if not calls:
        messages: list[Message] = []
        if response.text:
            messages.append(AssistantMessage(content=response.text))
        messages.append(
            UserMessage(
                content=(
                    "[signoff] Your last reply held a tool call that could not be read, "
                    "so nothing was run. Make the call again, with arguments that are one "
                    "JSON object matching the tool's schema."
                )
            )
        )
        return messages, []
    cut = response.stop != "malformed_tool_use"
    messages = [AssistantMessage(content=response.text, tool_calls=calls)]
    events: list[ToolResult] = []
    for call in calls:
        problem = _problem(call, cut=cut)
        messages.append(
            ToolResultMessage(
                call_id=call.id, name=call.name, content=f"Error: {problem}", is_error=True
            )
        )
        events.append(tool_result(call, "Error.", problem))
    return messages, events


def _problem(call: ToolCall, *, cut: bool) -> str:
    if cut:
        return (
            "your reply was cut off at the output token limit before this call was "
            "complete, so it was not run. Make it again with shorter arguments, or "
            "fewer calls in one reply."
        )
    raw = call.args.get(RAW_ARGUMENTS)
    if isinstance(raw, str) and len(call.args) == 1:
        shown = raw if len(raw) <= _RAW_SHOWN else raw[:_RAW_SHOWN] + "…"
        return (
            f"the arguments were not a JSON object, so the call was not run: {shown}. "
            f"Call {call.name} again with arguments that are one JSON object matching "
            "its schema."
        )
    return (
        "not run, because another call in the same reply could not be read. Make this call again."
    )
