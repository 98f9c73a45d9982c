"""Human-readable one-line renderings of events, for stderr (the CLI's and the demo's)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from signoff.events import (
    ActauthDecision,
    ApprovalPending,
    AssistantText,
    BudgetCheck,
    Done,
    LoopDenied,
    LoopDone,
    LoopMaxTurns,
    LoopSkipped,
    PromptCompaction,
    QuestionPending,
    SessionEvent,
    SkillLoaded,
    ToollaneResult,
    ToolResult,
    ToolStarted,
)

if TYPE_CHECKING:
    from signoff.events import LoopEvent

__all__ = ["render"]


def _args(args: dict[str, object] | None) -> str:
    return json.dumps(args or {}, ensure_ascii=False, separators=(", ", ": "))


def render(event: LoopEvent) -> str | None:
    """A short line for ``event``, or None for events not worth a line."""
    match event:
        case SessionEvent():
            return f"session {event.session_id}"
        case BudgetCheck(action="ok"):
            return None
        case BudgetCheck():
            return f"budget {event.action}: {event.used_tokens}/{event.budget_tokens} tokens"
        case PromptCompaction():
            return f"compacted the prompt from {event.from_} to {event.to} messages"
        case AssistantText():
            return f"assistant: {event.text}"
        case ActauthDecision():
            return f"gate: {event.tool} → {event.decision} ({event.reason})"
        case ToolStarted():
            return f"running {event.tool} {_args(event.args)}"
        case ToollaneResult():
            return None
        case ToolResult():
            detail = f" {event.detail_text}" if event.detail_text else ""
            return f"{event.tool} → {event.status_text}{detail}"
        case SkillLoaded():
            return f"loaded skill {event.skill}"
        case LoopSkipped():
            return f"skipped {event.name} (denied: {', '.join(event.denied_tools)})"
        case LoopMaxTurns():
            return f"stopped after {event.max_turns} model turns"
        case LoopDone(refused=str(refused)):
            return f"refused ({refused}): the answer is a refusal, not a finished task"
        case LoopDenied():
            return f"denied: {', '.join(event.denied_tools)}; the turn stops"
        case ApprovalPending():
            return f"approval needed: {event.tool} {_args(event.args)} ({event.reason})"
        case QuestionPending():
            options = f" [{' / '.join(event.options)}]" if event.options else ""
            return f"question: {event.question}{options}"
        case Done():
            return f"done{f' ({event.stop_reason})' if event.stop_reason else ''}"
        case _:
            return None
