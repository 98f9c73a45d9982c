"""What a pending item keeps: the item, its votes, a resolution's write, its outbox rows.

Outbox rows live beside the item they announce (``signoff.store.keys``), and the
rows of every other notification (a run's start or finish, a reminder) are the
same record. Nothing here imports the engine: the notifier reads these alone.
"""

import json
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field

from signoff.channels.subject import Subject
from signoff.gate.policy import ApprovalPolicy
from signoff.scopes import PendingScope
from signoff.store.records import Record

__all__ = ["OutboxRow", "PendingItem", "PendingStatus", "Ruling", "Vote"]

PendingStatus = Literal["pending", "approved", "denied", "answered", "expired"]


class Vote(Record):
    """One person's vote on an item that needs more than one (``ApprovalPolicy``).

    ``person`` is who counts (the same person through two channels is one vote);
    ``actor`` and ``channel`` are the identity and channel the vote came through.
    """

    person: str
    actor: str
    channel: str
    at: float
    decision: Literal["approve", "deny"]
    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class Ruling:
    """What one resolution of a pending item writes (``PendingDecisions.resolve``).

    ``status`` is where it moves (``expired``: the sweeper's move), decided by
    ``actor`` through ``channel`` at ``now``; ``answer`` a question's, ``note`` the
    decider's words, ``edited_args_json`` an approval's changed arguments
    (``signoff.approver.edits``); ``retain_until`` when the store may delete the item.
    """

    status: PendingStatus
    actor: str
    channel: str
    now: float
    answer: str | None = None
    note: str | None = None
    retain_until: float | None = None
    edited_args_json: str | None = None


class PendingItem(Record):
    """An approval or a question waiting for a human."""

    item_kind: ClassVar[str] = "pending"

    id: str
    kind: Literal["approval", "question"]
    status: PendingStatus = "pending"
    session_id: str
    run_id: str
    agent: str
    tenant: str
    environment: str
    call_id: str
    tool: str | None = None
    args: dict[str, Any] | None = None
    scope: PendingScope | None = None
    reason: str | None = None
    question: str | None = None
    options: list[str] | None = None
    # The decision card's text (signoff.approver.card), fixed when the turn paused: the
    # one-line summary, the request that started the turn, the agent's words
    # before the call (None where agent.yaml's approvalCard leaves them out).
    summary: str | None = None
    request: str | None = None
    said: str | None = None
    channels: list[str] = Field(default_factory=list)
    requested_at: float
    expires_at: float
    # Set by the one resolution that won.
    resolved_by: str | None = None
    resolved_via: str | None = None
    resolved_at: float | None = None
    answer: str | None = None
    note: str | None = None
    # The arguments an approver's changes made (``signoff.approver.edits``), as JSON text:
    # a top-level string, so the store keeps every nested value exactly.
    edited_args_json: str | None = None
    # Whether the turn was resumed after the resolution (the sweeper re-drives if not).
    resumed: bool = False
    # ``stuck`` reminders sent while it waited, and when the last one went out;
    # the count moves only by a conditional write, so two sweeps never send the same one.
    reminders: int = 0
    reminded_at: float | None = None
    # Seconds between ``stuck`` reminders (its agent's ``remindAfter``, fixed at the
    # pause like the policy; None: no reminders): part of when it is next due.
    remind_after: float | None = None
    # Epoch seconds after which the store may delete the item (resolved items).
    retain_until: float | None = None
    # What it needs beyond one decision (quorum, escalation), fixed at the pause;
    # None: one decision, no escalation.
    policy: ApprovalPolicy | None = None
    # Votes so far on an item whose policy asks for more than one approval.
    votes: list[Vote] = Field(default_factory=list)
    # len(votes): each vote is written on the condition that the count is still the
    # one its voter read (``signoff.store.rules.votable``), so no vote is lost and
    # exactly one vote reaches the quorum.
    vote_count: int = 0
    # Escalation steps taken so far (0: none), and when the last one was taken.
    escalation_step: int = 0
    escalated_at: float | None = None

    @property
    def tally(self) -> str | None:
        """The votes as the cards show them ("1 of 2 approvals — alice"), or None when
        one decision decides the item."""
        if self.policy is None or not self.policy.counts_votes or self.kind != "approval":
            return None
        return self.policy.tally(self.votes)

    @property
    def edited_args(self) -> dict[str, Any] | None:
        """The arguments the tool runs with after an approval with changes, else None."""
        if self.edited_args_json is None:
            return None
        edited: dict[str, Any] = json.loads(self.edited_args_json)
        return edited


class OutboxRow(Record):
    """One notification to send on one channel; ``notified_at`` is set only after success.

    ``pending_id`` is the text of the row's *subject* (``subject``, parsed): the
    logical notification it belongs to. For an approval or a question it is the
    pending item's id, and the notification is composed from the item when it is
    sent (its links carry a fresh resume token). Every other notification but an
    escalation step's is stored whole in ``notification`` and its subject names
    what it is about (``signoff.channels.subject``): a run's start or finish, a
    reminder, a stalled run.
    """

    item_kind: ClassVar[str] = "outbox"

    pending_id: str  # the subject's text; see above
    channel: str
    run_id: str
    kind: str
    created_at: float
    # The Notification's wire form (camelCase, no resume token) for rows that
    # have no pending item to compose from.
    notification: dict[str, Any] | None = None
    # Epoch seconds after which the store may delete the row (lifecycle rows;
    # a pending item's rows live as long as the item's partition).
    retain_until: float | None = None
    notified_at: float | None = None
    attempts: int = 0
    # ``failed`` with ``retry_at``: a permanent failure the sweeper sends again at
    # ``retry_at`` (a slow schedule, ``failures`` counting them); without: failed for good.
    failed: bool = False
    last_error: str | None = None
    failures: int = 0
    retry_at: float | None = None
    lock_owner: str | None = None
    lock_until: float | None = None
    # What the channel returned for the send (e.g. Slack's message ts), kept so
    # the message can be updated later and a resend can be recognised.
    receipt: dict[str, str] = Field(default_factory=dict)

    @property
    def subject(self) -> Subject:
        """The row's subject, parsed from ``pending_id``."""
        return Subject.parse(self.pending_id)

    @property
    def idempotency_key(self) -> str:
        return f"{self.run_id}:{self.pending_id}:{self.channel}"
