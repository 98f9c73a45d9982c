"""The values a turn is made of: its resumable state, resolutions and outcomes.

A pause is data and a resume is a new call: ``TurnState`` is everything a
paused turn needs besides the conversation itself (which lives in the session
log), so it stays small however long the session gets.
"""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from signoff.messages import ToolCall
from signoff.run_channels import RunChannel

if TYPE_CHECKING:
    from signoff.events import ApprovalPending, LoopEvent, QuestionPending
    from signoff.gate.policy import ApprovalPolicy

__all__ = [
    "Answered",
    "Approved",
    "CallState",
    "Continue",
    "Denied",
    "Finished",
    "Outcome",
    "Paused",
    "Resolution",
    "TurnState",
]

STATE_VERSION = 1

CallStatus = Literal[
    "undecided",  # the gate has not looked at it yet
    "allowed",  # will run once the whole batch is decided
    "awaiting",  # a human (or the asker of a question) must decide
    "denied",  # refused by a rule or a human; never runs
    "skipped",  # a sibling was denied, so it never runs
    "started",  # handed to the tool runner; its result is not recorded yet
    "done",  # result recorded
]


class CallState(BaseModel):
    """One tool call of the current batch and how far it got."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    call: ToolCall
    status: CallStatus = "undecided"
    decision: Literal["allow", "ask", "deny"] | None = None
    reason: str = ""
    # Set by a human resolution: who decided, and what an ask_user was answered.
    decided_by: str | None = None
    human_denied: bool = False
    # What the model asked for, when an approver changed the arguments (``call`` has the new ones).
    original_args: dict[str, Any] | None = None
    answer: str | None = None
    # The result as the model will see it.
    status_text: str | None = None
    content: str | None = None
    is_error: bool = False


class TurnState(BaseModel):
    """Where a turn stands, without the conversation itself."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    version: int = STATE_VERSION
    agent: str
    tenant: str
    environment: str
    session_id: str
    run_id: str
    # Where the run started (signoff.run_channels); a resume counts as it. None: the
    # caller named no channel, and the run is announced (``announces``).
    channel: RunChannel | None = None
    model_calls: int = 0
    # The prompt starts at this index of the session history; earlier messages
    # were compacted away (and are still in the log).
    window_start: int = 0
    omitted: int = 0
    # The index of the user message that started this turn: compaction keeps it (the
    # task), and the pending item's card quotes it.
    task_at: int = 0
    # The prompt's size in tokens (provider-reported when known, else estimated)
    # as of history index ``prompt_tokens_at``.
    prompt_tokens: int | None = None
    prompt_tokens_at: int = 0
    last_text: str = ""
    # Replies in a row whose tool calls could not be read (signoff.engine.stops).
    corrections: int = 0
    # Model calls in a row cut at an invocation's end (signoff.engine.turn): bounded,
    # so a model that outlives every invocation fails the turn instead of looping.
    cut_calls: int = 0
    batch: list[CallState] = []
    # Id of the pending item the turn waits on, and the call it is about.
    pending_id: str | None = None
    awaiting_call: str | None = None


@dataclass(frozen=True, kw_only=True)
class Approved:
    call_id: str
    actor: str = "human"
    # the arguments to run with, when the approver changed them
    args: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Denied:
    call_id: str
    actor: str = "human"
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class Answered:
    call_id: str
    answer: str
    actor: str = "human"


Resolution = Approved | Denied | Answered


@dataclass(frozen=True, kw_only=True)
class Finished:
    """The turn is over."""

    state: TurnState
    text: str
    stop_reason: Literal["max_turns", "denied"] | None = None
    events: "list[LoopEvent]" = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Paused:
    """The turn waits for a human; ``pending`` is the approval or question event, and
    ``policy`` the one the gate's verdict fixed for it (``signoff.engine.pauses.Pause``)."""

    state: TurnState
    pending: "ApprovalPending | QuestionPending"
    policy: "ApprovalPolicy | None" = None
    events: "list[LoopEvent]" = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Continue:
    """The turn yielded before its deadline; continue it with ``Engine.proceed``."""

    state: TurnState
    events: "list[LoopEvent]" = field(default_factory=list)


Outcome = Finished | Paused | Continue
