"""Human-readable one-line renderings of events, for stderr (the CLI's and the demo's).

The protocol's ``tool:result`` says ``Approved.`` for every call that ran, a rule's
``allow`` included; a reader would take that for a person's sign-off, so the line
says what happened (ran, failed, denied) and the gate's line says who allowed it.
"""

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

__all__ = ["render", "tone"]

# What the gate's decision reads as, for a person.
_GATE = {"allow": "allowed", "ask": "needs approval", "deny": "denied"}
_RESULT = {"Approved.": "ran", "Error.": "failed", "Denied.": "denied"}


def _args(args: dict[str, object] | None) -> str:
    return json.dumps(args or {}, ensure_ascii=False, separators=(", ", ": "))


# The events that stop a turn or pause it; every other one is a step of it.
_STOPS = (
    LoopSkipped,
    LoopMaxTurns,
    LoopDone,
    LoopDenied,
    ApprovalPending,
    QuestionPending,
    Done,
)


def render(event: LoopEvent) -> str | None:
    """A short line for ``event``, or None for events not worth a line."""
    if isinstance(event, _STOPS):
        return _stop_line(event)
    return _step_line(event)


def _step_line(event: LoopEvent) -> str | None:
    """A step of the turn: the model's words, the gate, a tool, the prompt's budget."""
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
            return (
                f"gate: {event.tool} {_GATE.get(event.decision, event.decision)} ({event.reason})"
            )
        case ToolStarted():
            return f"running {event.tool} {_args(event.args)}"
        case ToollaneResult():
            return None
        case ToolResult():
            detail = f" {event.detail_text}" if event.detail_text else ""
            outcome = _RESULT.get(event.status_text, event.status_text)
            return f"{event.tool} {outcome}:{detail}" if detail else f"{event.tool} {outcome}"
        case SkillLoaded():
            return f"loaded skill {event.skill}"
        case _:
            return None


def _stop_line(event: LoopEvent) -> str | None:
    """How the turn stopped, or what it waits on."""
    match event:
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


def tone(event: LoopEvent) -> str | None:
    """The colour of ``event``'s line on a terminal (``signoff_dev.cli.style``), if any."""
    match event:
        case ActauthDecision(decision="allow") | Done():
            return "green"
        case ActauthDecision(decision="deny") | LoopDenied() | LoopSkipped():
            return "red"
        case ActauthDecision() | ApprovalPending() | QuestionPending() | LoopMaxTurns():
            return "yellow"
        case ToolResult(status_text="Approved."):
            return "green"
        case ToolResult():
            return "red"
        case BudgetCheck() | PromptCompaction() | SessionEvent():
            return "dim"
        case _:
            return None
