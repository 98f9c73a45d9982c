"""What the model adapters share in reading and writing their providers' formats.

Anthropic's Messages API and Bedrock's Converse API are both content-block
formats: roles must alternate, a reply is a list of text and tool-use blocks,
and they name their stop reasons alike. Each adapter supplies how one message
becomes blocks and how one reply block reads; the merging, the gathering and the
stop table live here once. Every adapter turns a reply it cannot read into
``ModelRejected`` the same way.

Nothing here imports httpx or botocore: every adapter loads this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from signoff.errors import ModelRejected
from signoff.messages import AssistantMessage, ToolCall

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from signoff.messages import Message, ModelResponse, Stop

__all__ = ["block_stop", "gather_blocks", "merge_roles", "read_reply"]

Reply = TypeVar("Reply")

# Anthropic's and Converse's stop reasons (they share most names) in our words;
# end_turn, stop_sequence, pause_turn (server tools only, which signoff never
# offers) and any reason added later read as "end".
_BLOCK_STOPS: dict[str, Stop] = {
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",  # Anthropic
    "content_filtered": "content_filtered",  # Converse
    "guardrail_intervened": "guardrail_intervened",  # Converse
    "model_context_window_exceeded": "context_window_exceeded",
    "malformed_tool_use": "malformed_tool_use",  # Converse
    "malformed_model_output": "malformed_tool_use",  # Converse: unreadable output
}


def read_reply(
    reply: Reply, parse: Callable[[Reply], ModelResponse], *, provider: str
) -> ModelResponse:
    """``parse(reply)``, a reply of an unexpected shape becoming ``ModelRejected``.

    Raises:
        ModelRejected: ``parse`` found a key, an index or a value missing or mistyped.
    """
    try:
        return parse(reply)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ModelRejected(
            f"{provider}: unexpected response shape ({exc!r})", provider=provider
        ) from exc


def merge_roles(
    messages: Iterable[Message], blocks: Callable[[Message], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """``{"role", "content"}`` messages, adjacent same-role messages merged into one.

    The assistant's messages have the ``assistant`` role; user messages and tool
    results both have ``user``, so consecutive results share one message.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if isinstance(message, AssistantMessage) else "user"
        content = blocks(message)
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(content)
        else:
            wire.append({"role": role, "content": content})
    return wire


def gather_blocks(parts: Iterable[str | ToolCall]) -> tuple[str, tuple[ToolCall, ...]]:
    """The joined text and the tool calls among the parts an adapter read from a reply."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for part in parts:
        if isinstance(part, ToolCall):
            calls.append(part)
        else:
            texts.append(part)
    return "".join(texts), tuple(calls)


def block_stop(reason: str | None, *, has_calls: bool) -> Stop:
    """Our stop for an Anthropic or Converse stop reason; a missing or other one is ``end``.

    A reply with tool calls is ``tool_use`` unless its reason says the calls
    cannot be trusted (cut at ``max_tokens``, malformed) or the turn must stop.
    """
    stop = _BLOCK_STOPS.get(reason or "", "end")
    return "tool_use" if has_calls and stop == "end" else stop
