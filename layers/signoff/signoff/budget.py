"""The context budget: a token estimate, budget checks, and tail-preserving compaction.

The estimate is deliberately cheap and provider-independent: about four characters
per token, plus a small overhead per message. It steers nudges and compaction; the
provider's own count (``Usage``) stays the authority on what a call really cost.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from signoff.events import BudgetCheck
from signoff.messages import AssistantMessage, ToolResultMessage, UserMessage

if TYPE_CHECKING:
    from collections.abc import Sequence

    from signoff.messages import Message

__all__ = ["DEFAULT_NUDGE", "Budget", "compact", "estimate_tokens", "omission_note"]

DEFAULT_NUDGE = (
    "You are close to the context budget for this conversation. "
    "Finish the task now and answer concisely."
)

_CHARS_PER_TOKEN = 4
# Role markers and separators that every provider adds around a message.
_MESSAGE_OVERHEAD = 4
_NOTE = re.compile(r"\[(\d+) earlier messages? (?:was|were) omitted to fit the context budget\]")


def estimate_tokens(system: str, messages: Sequence[Message]) -> int:
    """An estimate (not a count) of the tokens a prompt of ``system`` and ``messages`` uses."""
    return _text_tokens(system) + sum(_message_tokens(message) for message in messages)


@dataclass(frozen=True, kw_only=True)
class Budget:
    """A token budget with the fractions at which to nudge and to stop."""

    tokens: int
    nudge_at: float = 0.8
    hard_at: float = 1.0
    nudge_text: str = DEFAULT_NUDGE

    def __post_init__(self) -> None:
        if self.tokens <= 0:
            raise ValueError(f"a budget needs a positive number of tokens, not {self.tokens}")
        if not 0 < self.nudge_at <= self.hard_at:
            raise ValueError(
                f"need 0 < nudge_at <= hard_at, not nudge_at={self.nudge_at}, "
                f"hard_at={self.hard_at}"
            )

    def check(self, used_tokens: int) -> BudgetCheck:
        """The ``budget:check`` event for a prompt of ``used_tokens``."""
        ratio = used_tokens / self.tokens
        if ratio >= self.hard_at:
            action, nudge = "over_hard_limit", None
        elif ratio >= self.nudge_at:
            action, nudge = "nudge", self.nudge_text
        else:
            action, nudge = "ok", None
        return BudgetCheck(
            action=action,
            used_tokens=used_tokens,
            budget_tokens=self.tokens,
            ratio=round(ratio, 6),
            nudge=nudge,
        )


def omission_note(count: int) -> UserMessage:
    """The message that stands in for ``count`` messages dropped by :func:`compact`."""
    noun = "message was" if count == 1 else "messages were"
    return UserMessage(content=f"[{count} earlier {noun} omitted to fit the context budget]")


def compact(messages: Sequence[Message], *, system: str, target_tokens: int) -> list[Message]:
    """The longest valid tail of ``messages`` that fits ``target_tokens``, after a note.

    A valid tail never starts with a tool result and never keeps a tool result whose
    assistant tool call was dropped. When no valid tail fits, the newest complete
    unit is returned anyway: an oversized history beats an invalid one. A history
    over target with more than one unit always loses at least one message. A note
    left by an earlier compaction is replaced by one counting every omission.
    """
    history = list(messages)
    if estimate_tokens(system, history) <= target_tokens:
        return history
    omitted_before, body = _split_note(history)
    costs = [_message_tokens(message) for message in body]
    suffix = [0] * (len(body) + 1)
    for index in range(len(body) - 1, -1, -1):
        suffix[index] = suffix[index + 1] + costs[index]
    base = _text_tokens(system)

    # Cut 0 keeps the whole body and so cannot fit: the history is over target.
    cuts = [cut for cut in _valid_cuts(body) if cut > 0]
    if not cuts:
        return history
    for cut in cuts:
        note = omission_note(omitted_before + cut)
        if base + _message_tokens(note) + suffix[cut] <= target_tokens:
            return [note, *body[cut:]]
    newest = cuts[-1]
    return [omission_note(omitted_before + newest), *body[newest:]]


def _split_note(history: list[Message]) -> tuple[int, list[Message]]:
    """How many messages an earlier compaction omitted, and the history after its note."""
    if history and isinstance(first := history[0], UserMessage):
        match = _NOTE.fullmatch(first.content)
        if match:
            return int(match.group(1)), history[1:]
    return 0, history


def _valid_cuts(messages: list[Message]) -> list[int]:
    """Ascending indexes where a kept tail may start without splitting a tool call."""
    # For each tool result, the index of the assistant message that made its call.
    caller: dict[int, int] = {}
    latest_call: dict[str, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                latest_call[call.id] = index
        elif isinstance(message, ToolResultMessage) and message.call_id in latest_call:
            caller[index] = latest_call[message.call_id]

    cuts: list[int] = []
    # The earliest caller of any tool result at or after the current index.
    earliest_caller = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        earliest_caller = min(earliest_caller, caller.get(index, len(messages)))
        message = messages[index]
        if not isinstance(message, ToolResultMessage) and earliest_caller >= index:
            cuts.append(index)
    cuts.reverse()
    return cuts


def _message_tokens(message: Message) -> int:
    chars = len(message.content)
    if isinstance(message, AssistantMessage):
        for call in message.tool_calls:
            chars += len(call.name) + len(_json(call.args))
    elif isinstance(message, ToolResultMessage):
        chars += len(message.name)
    return _MESSAGE_OVERHEAD + math.ceil(chars / _CHARS_PER_TOKEN)


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / _CHARS_PER_TOKEN)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
