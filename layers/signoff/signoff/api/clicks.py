"""A decision clicked in a chat (Slack, Lark): checked, written once, acknowledged fast.

The chat service waits only seconds for an answer, so a click does the one
conditional write that decides the item, updates the posted message to show
the outcome and who decided, and hands the turn to a fresh invocation
(``Continuations``); the turn itself never runs inside the acknowledgement.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from signoff.errors import AlreadyResolved, Expired, SendFailed
from signoff.ids import new_id
from signoff.store.records import AuditEntry

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.api.context import Api
    from signoff.store.records import PendingItem

__all__ = ["Click", "ClickOutcome", "decide_click"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Click:
    """Who clicked what, in which channel."""

    channel: str
    user: str
    pending_id: str
    decision: Literal["approve", "deny"] | None
    answer: str | None
    allowed: bool


@dataclass(frozen=True, kw_only=True)
class ClickOutcome:
    """What to tell the person who clicked (the chat shows it to them)."""

    text: str
    decided: bool


def decide_click(api: Api, click: Click, update: Callable[[str], None]) -> ClickOutcome:
    """Resolve ``click``'s item once, show the outcome in the message, continue the turn."""
    now = api.clock.now().timestamp()
    item = api.pending.get(click.pending_id)
    if item is None:
        return ClickOutcome(text="This request no longer exists.", decided=False)
    if not click.allowed:
        _audit(api, item, now, kind="refusal", decision="refused", click=click)
        return ClickOutcome(text="You are not one of the approvers of this request.", decided=False)
    status: Literal["approved", "denied", "answered"]
    if item.kind == "question":
        if click.answer is None:
            return ClickOutcome(text="This request needs an answer.", decided=False)
        status = "answered"
    elif click.decision is None:
        return ClickOutcome(text="This request needs Approve or Deny.", decided=False)
    else:
        status = "approved" if click.decision == "approve" else "denied"
    try:
        decided = api.pending.resolve(
            item.id,
            status=status,
            actor=f"{click.channel}:{click.user}",
            channel=click.channel,
            now=now,
            answer=click.answer,
            retain_until=now + api.turns.retention,
        )
    except AlreadyResolved as exc:
        current = exc.current
        who = f" by {current.resolved_by}" if current.resolved_by else ""
        return ClickOutcome(text=f"Already {current.status}{who}.", decided=False)
    except Expired:
        return ClickOutcome(text="This request expired before it was decided.", decided=False)
    _audit(api, decided, now, kind="human", decision=status, click=click)
    outcome = _describe(decided, click)
    try:
        update(outcome)
    except SendFailed:
        # The decision stands; only the message still shows its buttons.
        log.warning("could not update the chat message of %s", decided.id, exc_info=True)
    api.continuations.schedule(decided.session_id)
    return ClickOutcome(text=outcome, decided=True)


def _describe(item: PendingItem, click: Click) -> str:
    subject = item.tool or item.question or "the request"
    if item.status == "answered":
        return f"{subject}: answered “{item.answer}” by {click.user}"
    return f"{subject}: {item.status} by {click.user}"


def _audit(
    api: Api, item: PendingItem, now: float, *, kind: str, decision: str, click: Click
) -> None:
    api.turns.audit.record(
        [
            AuditEntry(
                id=new_id(),
                subject=item.session_id,
                at=now,
                kind=kind,
                decision=decision,
                actor=f"{click.channel}:{click.user}",
                channel=click.channel,
                pending_id=item.id,
                tool=item.tool,
                reason="" if click.allowed else "not an approver of this channel",
            )
        ]
    )
