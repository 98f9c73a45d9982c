"""The context budget: a token estimate, budget checks, and compaction that keeps the task.

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

__all__ = [
    "DEFAULT_NUDGE",
    "Budget",
    "compact",
    "compact_start",
    "estimate_tokens",
    "is_omission_note",
    "omission_note",
    "window",
]

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


def is_omission_note(message: Message) -> bool:
    """Whether ``message`` is a note :func:`omission_note` wrote."""
    return isinstance(message, UserMessage) and _NOTE.fullmatch(message.content) is not None


def compact(messages: Sequence[Message], *, system: str, target_tokens: int) -> list[Message]:
    """``messages`` cut down to fit ``target_tokens``: the task, notes, and the newest tail.

    See :func:`compact_start` for which tail is kept and :func:`window` for what is
    kept before it. A history that fits is returned unchanged.
    """
    start = compact_start(messages, system=system, target_tokens=target_tokens)
    return window(messages, start) if start else list(messages)


def compact_start(
    messages: Sequence[Message],
    *,
    system: str,
    target_tokens: int,
    start: int = 0,
    task: int | None = None,
) -> int:
    """Where the kept tail of ``messages`` starts so the :func:`window` fits ``target_tokens``.

    ``start`` is where the current window's tail starts; the result is never earlier.
    ``task`` is the index of the user message the turn works on (see :func:`window`).
    The tail is the longest one that fits and starts at a valid cut: not at a tool
    result, not after an assistant message whose results come at or after the cut,
    not at an omission note. When no valid tail fits, the newest valid cut is
    returned anyway (an oversized prompt beats an invalid one); with no valid cut
    after ``start``, ``start`` itself.
    """
    history = list(messages)
    if estimate_tokens(system, window(history, start, task=task)) <= target_tokens:
        return start
    users = _task_indexes(history, task)
    # A cut that only moves pinned messages out of the tail would drop nothing.
    cuts = [
        cut
        for cut in _valid_cuts(history)
        if cut > start and not set(range(start, cut)) <= _pinned(users, cut)
    ]
    if not cuts:
        return start
    costs = [_message_tokens(message) for message in history]
    suffix = [0] * (len(history) + 1)
    for index in range(len(history) - 1, -1, -1):
        suffix[index] = suffix[index + 1] + costs[index]
    base = _text_tokens(system)
    for cut in cuts:
        head = _head(history, cut, users)
        if base + sum(_message_tokens(m) for m in head) + suffix[cut] <= target_tokens:
            return cut
    return cuts[-1]


def window(messages: Sequence[Message], start: int, *, task: int | None = None) -> list[Message]:
    """The prompt's messages when the kept tail of ``messages`` starts at ``start``.

    Before the tail come the pinned messages compaction never drops -- the first
    user message and the task the turn works on (the message at index ``task``, by
    default the newest user message), when they are before ``start`` -- and, for
    each run of dropped messages, one note counting them in place of the run. Every
    one of these is a user message, so the result begins with the user and keeps
    each tool result right after its call: the conversation rules of Converse,
    Anthropic and OpenAI hold as they did for the whole history.
    """
    history = list(messages)
    if start == 0:
        return history  # nothing dropped: no need to look through a long history
    return [*_head(history, start, _task_indexes(history, task)), *history[start:]]


def _head(history: list[Message], start: int, tasks: tuple[int, ...]) -> list[Message]:
    """The pinned messages before ``start`` with a note for each gap between them."""
    head: list[Message] = []
    gap_from = 0
    for index in [*sorted(_pinned(tasks, start)), start]:
        # A note from an earlier compaction in the gap counts every message it stood for.
        dropped = sum(_stands_for(m) for m in history[gap_from:index])
        if dropped:
            head.append(omission_note(dropped))
        if index < start:
            head.append(history[index])
        gap_from = index + 1
    return head


def _task_indexes(history: list[Message], task: int | None) -> tuple[int, ...]:
    """The indexes of the first user message and of the turn's task (default: the newest)."""
    users = (
        index
        for index, message in enumerate(history)
        if isinstance(message, UserMessage) and not is_omission_note(message)
    )
    first = next(users, None)
    if first is None:
        return ()
    if task is None:
        task = max(users, default=first)
    return (first, task)


def _pinned(tasks: tuple[int, ...], start: int) -> set[int]:
    """The task messages a window whose tail starts at ``start`` keeps before its tail."""
    return {index for index in tasks if index < start}


def _stands_for(message: Message) -> int:
    """How many original messages ``message`` is: a note's count, else one."""
    if isinstance(message, UserMessage):
        match = _NOTE.fullmatch(message.content)
        if match:
            return int(match.group(1))
    return 1


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
        if (
            not isinstance(message, ToolResultMessage)
            and not is_omission_note(message)
            and earliest_caller >= index
        ):
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
