"""The HTTP API's bodies: what clients send and what they get back (protocol v1 shapes)."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from signoff.agents.hooks import SESSION_ID
from signoff.approver.edits import MAX_REASON_CHARS
from signoff.gate.decision import TENANT

__all__ = [
    "AgentSummary",
    "AnswerBody",
    "ApprovalsState",
    "ApproveBody",
    "DecisionBody",
    "DenyBody",
    "ErrorBody",
    "EscalationState",
    "FinishedBody",
    "MessageBody",
    "PausedReason",
    "PendingBody",
    "ScheduledRun",
    "SessionDecision",
    "SessionStatusBody",
    "StopReason",
    "VoteBody",
]

MAX_MESSAGE_CHARS = 32_000


class _Wire(BaseModel):
    """camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(defer_build=True, alias_generator=to_camel, populate_by_name=True)


class MessageBody(_Wire):
    """``POST /agents/{name}/messages``; extra fields may carry the agent's session key."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", alias_generator=to_camel, populate_by_name=True
    )

    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    # the one session id form, which a session_id_for hook's ids keep too
    session_id: str | None = Field(default=None, pattern=rf"^{SESSION_ID.pattern}$")


class DecisionBody(BaseModel):
    """``POST /pending-approvals/{id}/resolve``."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    decision: Literal["approve", "deny"]
    note: str | None = Field(default=None, max_length=2000)


class ApproveBody(BaseModel):
    """``POST /approvals/{id}/approve``: optionally, changes to the call's arguments."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    args: dict[str, Any] | None = Field(
        default=None,
        description=(
            "The fields to change, merged over the arguments as asked; only a tool declared "
            "editable takes them, and they must pass its schema (422 names the fields)."
        ),
    )
    note: str | None = Field(default=None, max_length=MAX_REASON_CHARS)


class DenyBody(BaseModel):
    """``POST /approvals/{id}/deny``: optionally, why; the model reads it in the call's result."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    reason: str | None = Field(default=None, max_length=MAX_REASON_CHARS)


class AnswerBody(BaseModel):
    """``POST /questions/{id}/answer`` and ``POST /pending-questions/{id}/answer``."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    answer: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)


# Why a turn stopped: a finish v1 marks (max_turns, denied), or a pause on a person,
# as loopengine's durable approver ends a turn (pending_approval, pending_question).
PausedReason = Literal["pending_approval", "pending_question"]
StopReason = Literal["max_turns", "denied", "pending_approval", "pending_question"]


class FinishedBody(_Wire):
    """200: the turn finished."""

    text: str
    session_id: str
    events: list[dict[str, Any]]
    stop_reason: Literal["max_turns", "denied"] | None = None


class VoteBody(_Wire):
    """One person's vote on an approval that needs several."""

    person: str = Field(description="Who counts: a people.yaml name, or the actor id itself")
    actor: str = Field(description="The identity it came through (as a decision's actor)")
    channel: str
    decision: Literal["approve", "deny"]
    at: str = Field(description="RFC 3339")
    note: str | None = None


class ApprovalsState(_Wire):
    """What an approval needs before its turn continues, and the votes so far."""

    needed: int = Field(description="Approvals by different people that approve it")
    deny_quorum: int = Field(description="Denies by different people that deny it")
    approvers: list[str] = Field(
        default_factory=list,
        description="The people and groups who may vote (the rule's from); empty: anyone",
    )
    votes: list[VoteBody] = Field(default_factory=list)
    line: str = Field(description="The tally as the cards show it: 1 of 2 approvals — alice")


class EscalationState(_Wire):
    """Where a waiting item stands on its escalation ladder, once a step was taken."""

    step: int = Field(description="Steps taken so far (from 1)")
    steps: int = Field(description="Steps in the ladder, its final then included")
    at: str | None = Field(default=None, description="When the last step was taken, RFC 3339")
    to: list[str] = Field(description="The channels the last step asked")
    asked: list[str] = Field(description="Every channel the steps taken asked, in order")
    line: str = Field(
        description="As the card shows it: Escalated to slack-leads 2 hours ago (step 1 of 3)"
    )


class PendingBody(_Wire):
    """202: the turn waits for a decision, an answer, or (``running``) more time."""

    pending: Literal[True] = True
    type: Literal["approval", "question", "running"]
    session_id: str
    events: list[dict[str, Any]]
    status_url: str
    id: str | None = None
    tool: str | None = None
    args: dict[str, Any] | None = None
    scope: dict[str, str] | None = None
    reason: str | None = None
    question: str | None = None
    options: list[str] | None = None
    approve_url: str | None = None
    deny_url: str | None = None
    answer_url: str | None = None
    expires_at: str | None = None
    # The decision card (signoff.approver.card): the one-line summary, the request that started
    # the turn and the agent's words before the call (absent when agent.yaml's
    # approvalCard.conversation is false). Additive to v1.
    summary: str | None = None
    request: str | None = None
    said: str | None = None
    # Where it stands on its escalation ladder, once a step was taken. Additive to v1.
    escalation: EscalationState | None = None
    # An approval its rule gives to more than one person, or to named ones
    # (signoff.gate.policy): the quorum and the votes so far. Additive to v1.
    approvals: ApprovalsState | None = None
    # What loopengine's durable approver ends the turn with; absent for ``running``.
    # Additive to v1.
    stop_reason: PausedReason | None = Field(
        default=None,
        description="pending_approval or pending_question: the turn stopped to wait on a "
        "person (absent while it is running)",
    )


class SessionDecision(_Wire):
    """One decision on a pending item of the session: who, through which channel, what, when."""

    pending_id: str
    decision: Literal["approved", "denied", "answered", "expired"]
    actor: str = Field(
        description="Who decided: a Slack / Lark user id, the email address a link was made "
        "for, apikey:<key id>@<tenant>, link (a link naming nobody), or sweeper (expiry, "
        "escalation)"
    )
    channel: str = Field(description="The channels.yaml name, or api / link / expiry / escalation")
    at: str = Field(description="RFC 3339")
    tool: str | None = None
    note: str | None = None


class SessionStatusBody(_Wire):
    """``GET /agents/{name}/sessions/{id}``: where the session stands, its decisions and events."""

    session_id: str
    agent: str
    status: Literal["idle", "running", "paused", "done"]
    pending: PendingBody | None = None
    decisions: list[SessionDecision] = Field(default_factory=list)
    text: str | None = None
    stop_reason: StopReason | None = Field(
        default=None,
        description="done: max_turns or denied (absent for an answer); paused: "
        "pending_approval or pending_question",
    )
    events: list[dict[str, Any]]
    next: int = Field(description="Pass as ?after= to get only newer events")


class AgentSummary(BaseModel):
    """One entry of ``GET /agents``; a ``misconfigured`` agent's requests fail until fixed."""

    model_config = ConfigDict(defer_build=True)

    name: str
    description: str
    status: Literal["ready", "misconfigured"] = "ready"


class ErrorBody(BaseModel):
    model_config = ConfigDict(defer_build=True)

    error: str
    detail: str
    # 422 on an approval with changes: the argument fields the tool refused
    fields: list[str] | None = None


class ScheduledRun(BaseModel):
    """An EventBridge schedule's input for the message function."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    agent: str
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    # the first segment of the rules' scope: no "/" (signoff.gate.decision.TENANT)
    tenant: str = Field(default="default", pattern=TENANT.pattern)
