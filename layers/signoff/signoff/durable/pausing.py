"""A pause as stored data, and a stored resolution as the engine reads it.

When the engine returns ``Paused``, the turn's commit carries the pending item
built here and one outbox row per channel the agent's ``notify`` names for its
kind: the checkpoint, the item and its rows are one transaction, so a committed
pause is always notified (the sweeper re-drives rows never sent). The item keeps
the approval policy the gate's verdict fixed (``Paused.policy``), whole.

The way back: a resolved item becomes the engine's ``Resolution`` for the call
the turn waits on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.approver.card import EXCERPT_MAX, clip, summarize
from signoff.engine import Answered, Approved, Denied
from signoff.errors import UsageError
from signoff.events import ApprovalPending
from signoff.messages import AssistantMessage, UserMessage
from signoff.notify.lifecycle import subscribers
from signoff.store.pending_records import OutboxRow, PendingItem

if TYPE_CHECKING:
    from collections.abc import Sequence

    from signoff.agents import Agent
    from signoff.engine import Resolution, TurnState
    from signoff.events import QuestionPending
    from signoff.gate.policy import ApprovalPolicy
    from signoff.messages import Message

__all__ = ["outbox_rows", "pending_item", "resolution_of"]


def pending_item(
    agent: Agent,
    state: TurnState,
    pending: ApprovalPending | QuestionPending,
    now: float,
    history: Sequence[Message] = (),
    *,
    policy: ApprovalPolicy | None,
) -> PendingItem:
    """The pending item of a pause, sent to the channels that want its kind.

    It carries ``policy`` whole, the one the gate's verdict fixed (``Paused.policy``),
    and its decision card's text (``signoff.approver.card``): the summary, and from
    ``history`` the request that started the turn and the agent's words before
    the call, unless the agent's ``approvalCard.conversation`` is off.
    """
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
        # fixed at the pause, as the policy is: part of when the sweep reads it next
        "remind_after": (
            agent.config.remind_after if subscribers(agent.config.notify, "stuck") else None
        ),
        "policy": policy,
    }
    kind = "approval" if isinstance(pending, ApprovalPending) else "question"
    common["channels"] = sorted(
        channel for channel, wanted in agent.config.notify.items() if kind in wanted
    )
    if agent.config.approval_card.conversation:
        common["request"], common["said"] = _excerpts(history, state)
    if isinstance(pending, ApprovalPending):
        tool = agent.tools.get(pending.tool)
        return PendingItem(
            kind="approval",
            summary=summarize(tool.summary if tool else None, pending.tool, pending.args),
            tool=pending.tool,
            args=pending.args,
            scope=pending.scope,
            reason=pending.reason,
            **common,
        )
    return PendingItem(
        kind="question",
        question=pending.question,
        options=pending.options,
        summary=clip(" ".join(pending.question.split()), 160),
        **common,
    )


def _excerpts(history: Sequence[Message], state: TurnState) -> tuple[str | None, str | None]:
    """The turn's request (its task message) and the assistant text of the awaited call."""
    task = state.task_at
    start = history[task] if 0 <= task < len(history) else None
    request = start.content if isinstance(start, UserMessage) else None
    said: str | None = None
    for message in reversed(history):
        if isinstance(message, AssistantMessage) and any(
            call.id == state.awaiting_call for call in message.tool_calls
        ):
            said = message.content
            break
    return (
        clip(request, EXCERPT_MAX) if request and request.strip() else None,
        clip(said, EXCERPT_MAX) if said and said.strip() else None,
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
