"""What a turn pauses with: an approval to give or a question to answer, and the
gate's verdict on it (the approval policy the person's decision is held to)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from signoff.events import ApprovalPending, PendingScope, QuestionPending

if TYPE_CHECKING:
    from signoff.engine.state import CallState, TurnState
    from signoff.gate.policy import ApprovalPolicy

__all__ = ["Pause", "approval_pending", "question_pending"]


@dataclass(frozen=True, kw_only=True)
class Pause:
    """A call the turn stops on: the event that asks, and the policy that asked.

    ``policy`` is fixed here, where the gate decided (the asking rule's, or the
    agent's ladder for the default and for a question; None: one decision by
    anyone), and goes whole with the pause onto the stored item, which the decision
    path and the sweeper read it from. The event is the protocol's wire form and
    carries no policy.
    """

    pending: ApprovalPending | QuestionPending
    policy: ApprovalPolicy | None = None


def approval_pending(
    state: TurnState, call: CallState, *, pending_id: str, requested_at: str
) -> ApprovalPending:
    """The ``approval:pending`` event for ``call``, which the gate said to ask about."""
    return ApprovalPending(
        id=pending_id,
        tool=call.call.name,
        args=call.call.args,
        scope=PendingScope(tenant=state.tenant, environment=state.environment, agent=state.agent),
        reason=call.reason,
        requested_at=requested_at,
    )


def question_pending(
    state: TurnState, call: CallState, *, pending_id: str, requested_at: str
) -> QuestionPending:
    """The ``question:pending`` event for an ``ask_user`` call."""
    options = call.call.args.get("options")
    return QuestionPending(
        id=pending_id,
        question=str(call.call.args.get("question", "")),
        options=[str(o) for o in options] if isinstance(options, list) and options else None,
        agent=state.agent,
        session_id=state.session_id,
        requested_at=requested_at,
    )
