"""A pause as stored data, and a stored resolution as the engine reads it.

When the engine returns ``Paused``, the turn's commit carries the pending item
built here and one outbox row per channel the agent's ``notify`` names for its
kind: the checkpoint, the item and its rows are one transaction, so a committed
pause is always notified (the sweeper re-drives rows never sent).

The way back: a resolved item becomes the engine's ``Resolution`` for the call
the turn waits on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.engine import Answered, Approved, Denied
from signoff.errors import UsageError
from signoff.events import ApprovalPending
from signoff.store.records import OutboxRow, PendingItem

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.engine import Resolution, TurnState
    from signoff.events import QuestionPending

__all__ = ["outbox_rows", "pending_item", "resolution_of"]


def pending_item(
    agent: Agent,
    state: TurnState,
    pending: ApprovalPending | QuestionPending,
    now: float,
) -> PendingItem:
    """The pending item of a pause, sent to the channels that want its kind."""
    common: dict[str, Any] = {
        "id": pending.id,
        "session_id": state.session_id,
        "run_id": state.run_id,
        "agent": agent.name,
        "tenant": state.tenant,
        "environment": state.environment,
        "call_id": state.awaiting_call or "",
        "requested_at": now,
        "expires_at": now + agent.config.approval_timeout,
    }
    kind = "approval" if isinstance(pending, ApprovalPending) else "question"
    common["channels"] = sorted(
        channel for channel, wanted in agent.config.notify.items() if kind in wanted
    )
    if isinstance(pending, ApprovalPending):
        return PendingItem(
            kind="approval",
            tool=pending.tool,
            args=pending.args,
            scope=pending.scope,
            reason=pending.reason,
            **common,
        )
    return PendingItem(
        kind="question", question=pending.question, options=pending.options, **common
    )


def outbox_rows(item: PendingItem, now: float) -> list[OutboxRow]:
    """One outbox row per channel of ``item``: each is sent, locked and recorded on its own."""
    return [
        OutboxRow(
            pending_id=item.id,
            channel=channel,
            run_id=item.run_id,
            kind=item.kind,
            created_at=now,
        )
        for channel in item.channels
    ]


def resolution_of(item: PendingItem) -> Resolution:
    """What a resolved ``item`` tells the engine about the call it paused on.

    Raises:
        UsageError: the item is still pending.
    """
    actor = item.resolved_by or "unknown"
    if item.status == "approved":
        return Approved(call_id=item.call_id, actor=actor, args=item.edited_args)
    if item.status == "answered":
        return Answered(call_id=item.call_id, answer=item.answer or "", actor=actor)
    if item.status == "expired":
        return Denied(call_id=item.call_id, actor="expiry", reason="expired")
    if item.status == "denied":
        return Denied(call_id=item.call_id, actor=actor, reason=item.note or "")
    raise UsageError(f"pending item {item.id} is not resolved yet")
