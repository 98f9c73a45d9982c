"""The HTTP API's bodies: what clients send and what they get back (protocol v1 shapes)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from signoff.agents.hooks import SESSION_ID
from signoff.edits import MAX_REASON_CHARS

__all__ = [
    "AgentSummary",
    "AnswerBody",
    "ApproveBody",
    "DecisionBody",
    "DenyBody",
    "ErrorBody",
    "FinishedBody",
    "MessageBody",
    "PendingBody",
    "ScheduledRun",
    "SessionDecision",
    "SessionStatusBody",
]

MAX_MESSAGE_CHARS = 32_000


class _Wire(BaseModel):
    """camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class MessageBody(_Wire):
    """``POST /agents/{name}/messages``; extra fields may carry the agent's session key."""

    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True)

    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    # the one session id form, which a session_id_for hook's ids keep too
    session_id: str | None = Field(default=None, pattern=rf"^{SESSION_ID.pattern}$")


class DecisionBody(BaseModel):
    """``POST /pending-approvals/{id}/resolve``."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "deny"]
    note: str | None = Field(default=None, max_length=2000)


class ApproveBody(BaseModel):
    """``POST /approvals/{id}/approve``: optionally, changes to the call's arguments."""

    model_config = ConfigDict(extra="forbid")

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

    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, max_length=MAX_REASON_CHARS)


class AnswerBody(BaseModel):
    """``POST /questions/{id}/answer`` and ``POST /pending-questions/{id}/answer``."""

    model_config = ConfigDict(extra="forbid")

    answer: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)


class FinishedBody(_Wire):
    """200: the turn finished."""

    text: str
    session_id: str
    events: list[dict[str, Any]]
    stop_reason: Literal["max_turns", "denied"] | None = None


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
    # The decision card (signoff.card): the one-line summary, the request that started
    # the turn and the agent's words before the call (absent when agent.yaml's
    # approvalCard.conversation is false). Additive to v1.
    summary: str | None = None
    request: str | None = None
    said: str | None = None


class SessionDecision(_Wire):
    """One decision on a pending item of the session: who, through which channel, what, when."""

    pending_id: str
    decision: Literal["approved", "denied", "answered", "expired"]
    actor: str = Field(
        description="Who decided: a Slack / Lark user id, the email address a link was made "
        "for, apikey:<key id>@<tenant>, link (a link naming nobody), or sweeper (expiry)"
    )
    channel: str = Field(description="The channels.yaml name, or api / link / expiry")
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
    stop_reason: str | None = None
    events: list[dict[str, Any]]
    next: int = Field(description="Pass as ?after= to get only newer events")


class AgentSummary(BaseModel):
    """One entry of ``GET /agents``; a ``misconfigured`` agent's requests fail until fixed."""

    name: str
    description: str
    status: Literal["ready", "misconfigured"] = "ready"


class ErrorBody(BaseModel):
    error: str
    detail: str
    # 422 on an approval with changes: the argument fields the tool refused
    fields: list[str] | None = None


class ScheduledRun(BaseModel):
    """An EventBridge schedule's input for the message function."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    tenant: str = "default"
