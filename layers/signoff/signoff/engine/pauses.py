"""The events a turn pauses with: an approval to give or a question to answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.events import ApprovalPending, PendingScope, QuestionPending

if TYPE_CHECKING:
    from signoff.engine.state import CallState, TurnState

__all__ = ["approval_pending", "question_pending"]


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
