"""What a channel is sent about a pause or a run, with the links a person acts on.

A channel receives one ``Notification`` and an idempotency key that is stable
per logical notification and channel (``runId:pendingId:channel``, where the
pending id is the outbox row's subject): every retry of the same send carries
the same key.

``notification_key`` turns it into a channel-independent form, the one a
transport's ``Idempotency-Key`` carries, so a receiver fed by two channels can
drop the second copy: ``<runId>:<approvalId>`` for an approval (and
``<runId>:<pendingId>`` for a question), and one key per kind for the rest (the
table on ``notification_key``).
"""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from signoff.approver.card import Card, Escalation, readable_args
from signoff.channels.subject import Subject

__all__ = ["Kind", "Notification", "idempotency_key", "notification_key"]

Kind = Literal["approval", "question", "stuck", "result", "info"]


class Notification(BaseModel):
    """``{kind, agent, runId, title, body, resumeToken?, expiresAt?}`` plus links and context.

    For an approval the body shows the tool and its arguments as JSON. Links are
    absolute: ``approveUrl`` / ``denyUrl`` / ``answerUrl`` are one-click API
    routes carrying a resume token, ``linkUrl`` the confirmation page that is
    safe for mail scanners (its GET changes nothing). A notification for a chat
    channel that lists ``approvers`` has no resume token and no deciding URL: its
    ``linkUrl`` carries a ``view`` token, and its buttons decide by who clicks.
    """

    model_config = ConfigDict(
        defer_build=True,
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
    )

    kind: Kind
    agent: str
    run_id: str
    title: str
    body: str
    resume_token: str | None = None
    expires_at: str | None = None  # RFC 3339
    # When the item was asked (RFC 3339) and, for an approval, the gate's reason:
    # what the queue channels store in a row's ``requestedAt`` / ``reason``.
    requested_at: str | None = None
    reason: str | None = None
    pending_id: str | None = None
    session_id: str | None = None
    tenant: str | None = None
    tool: str | None = None
    args: dict[str, Any] | None = None
    question: str | None = None
    options: list[str] | None = None
    link_url: str | None = None
    approve_url: str | None = None
    deny_url: str | None = None
    answer_url: str | None = None
    # How to act when the message itself cannot take the decision: a question sent
    # without deciding links (a chat channel with ``approvers``) says where to answer.
    note: str | None = None
    # Lifecycle announcements (``info`` / ``result``): what started the run, and a
    # synthetic finish's reason (``max_turns`` / ``denied``), as ``on_run_finish`` is told.
    trigger: Literal["message", "resolution"] | None = None
    stop_reason: str | None = None
    # The decision card (signoff.approver.card) of an approval or a question: its one-line
    # summary, the request that started the turn, the agent's words before the
    # call, and the environment it runs in. Additive: a v1 reader ignores them.
    summary: str | None = None
    request: str | None = None
    said: str | None = None
    environment: str | None = None
    # Where the item stands on its escalation ladder once a step was taken: steps
    # taken of the ladder's, when the last was (RFC 3339) and the channels it asked.
    escalation_step: int | None = None
    escalation_steps: int | None = None
    escalated_at: str | None = None
    escalated_to: list[str] | None = None
    # An approval that needs several people: the tally, "1 of 2 approvals — alice".
    approvals: str | None = None
    # The recipient's own approvals inbox (``GET /inbox?token=``), where an email
    # channel sets ``inboxLink``: every item of the tenant waiting for them.
    inbox_url: str | None = None

    def card(self) -> Card | None:
        """The decision card of an approval or a question (None for the other kinds)."""
        if self.kind not in ("approval", "question"):
            return None
        fallback = readable_args(self.tool, self.args) if self.tool else self.question or ""
        return Card(
            kind=self.kind,
            agent=self.agent,
            tenant=self.tenant or "",
            environment=self.environment,
            summary=self.summary or fallback or self.title,
            requested_at=_epoch(self.requested_at) or 0.0,
            expires_at=_epoch(self.expires_at) or 0.0,
            tool=self.tool,
            args=self.args,
            question=self.question,
            options=tuple(self.options or ()),
            reason=self.reason,
            request=self.request,
            said=self.said,
            escalation=self._escalation(),
            approvals=self.approvals,
        )

    def _escalation(self) -> Escalation | None:
        if not self.escalation_step or not self.escalation_steps:
            return None
        return Escalation(
            step=self.escalation_step,
            steps=self.escalation_steps,
            at=_epoch(self.escalated_at),
            to=tuple(self.escalated_to or ()),
        )

    def card_rows(self) -> str | None:
        """A composed approval's card as text after its summary, without its arguments.

        What a chat message shows under its title, beside its own rendering of the
        arguments; None for a notification the ``Composer`` did not build (no summary),
        whose ``body`` is all there is.
        """
        card = self.card()
        if card is None or self.summary is None or card.kind != "approval":
            return None
        rows = card.text(card.requested_at, arguments=False).split("\n", 2)
        return rows[-1].strip() if len(rows) == 3 else None

    def wire(self) -> dict[str, Any]:
        """The JSON a webhook receives: camelCase, absent fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _epoch(moment: str | None) -> float | None:
    try:
        return datetime.fromisoformat(moment).timestamp() if moment else None
    except ValueError:
        return None


def idempotency_key(run_id: str, pending_id: str, channel: str) -> str:
    """Stable per logical notification and channel, across every retry."""
    return f"{run_id}:{pending_id}:{channel}"


def notification_key(channel_key: str, *, run_id: str, channel: str) -> str:
    """The channel-independent key of the notification a channel's ``channel_key`` sends.

    ``channel_key`` is ``idempotency_key(run_id, subject, channel)``; the subject
    (``signoff.channels.subject``) says what the notification is:

    ======================================  ====================================
    subject                                 key
    ======================================  ====================================
    ``<pendingId>`` (approval, question)    ``<runId>:<pendingId>``
    ``run:<runId>:run_start``               ``<runId>:run_start``
    ``run:<runId>:run_start:<pendingId>``   ``<runId>:run_start:<pendingId>``
    ``run:<runId>:run_finish``              ``<runId>:result``
    ``stuck:<pendingId>:<n>``               ``<runId>:<pendingId>:stuck:<n>``
    ``stalled:<sessionId>:<runId>``         ``<runId>:stalled``
    ``escalate:<pendingId>:<n>``            ``<runId>:escalate:<pendingId>:<n>``
    ======================================  ====================================

    The same on every channel and every retry. A key of another shape (a caller
    that chose its own) is returned as it is.
    """
    head, tail = f"{run_id}:", f":{channel}"
    if not (channel_key.startswith(head) and channel_key.endswith(tail)):
        return channel_key
    text = channel_key[len(head) : len(channel_key) - len(tail)]
    if not text:
        return channel_key
    try:
        subject = Subject.parse(text)
    except ValueError:
        return f"{run_id}:{text}"  # not one of ours: the key keeps it whole
    ours = subject.run_id == run_id
    match subject.kind:
        case "run_finish" if ours:
            return f"{run_id}:result"
        case "run_start" if ours:
            resumed = "" if subject.pending_id is None else f":{subject.pending_id}"
            return f"{run_id}:run_start{resumed}"
        case "stuck":
            return f"{run_id}:{subject.pending_id}:stuck:{subject.number}"
        case "stalled" if ours:
            return f"{run_id}:stalled"
    return f"{run_id}:{text}"
