"""A decision clicked in a chat (Slack, Lark): bound to its channel, written once, answered fast.

A click decides an item only through the channel it was sent to. The click's
own chat (Slack's ``channel.id``, Lark's ``open_chat_id``) names the channel —
among those whose secret verified the request, never merely the first that
did — and the item must have been sent there: its agent notifies that channel
for this kind of item and the item has an outbox row for it, written with the
pause under the item's tenant. The approvers checked are that channel's. Every
refusal is audited with the clicker and the reason.

The chat service waits only seconds for an answer, so a click does the one
conditional write that decides the item (``Turns.decide`` without resuming),
updates the posted message to show the outcome and who decided, and the turn
goes on in a fresh invocation (``Continuations``); it never runs inside the
acknowledgement.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from signoff.approver.actors import chat_user
from signoff.approver.card import decided_line
from signoff.approver.edits import describe_changes
from signoff.durable.decide import not_sent_to, verdict_of
from signoff.errors import (
    AlreadyResolved,
    AlreadyVoted,
    Expired,
    Forbidden,
    SendFailed,
    SignoffError,
    UsageError,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from signoff.api.context import Api
    from signoff.approver.actors import Actor
    from signoff.channels.settings.lark import LarkSettings
    from signoff.channels.settings.slack import SlackSettings
    from signoff.store.pending_records import PendingItem

__all__ = ["Click", "ClickOutcome", "decide_click"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Click:
    """Who clicked what, in which chat of which vendor.

    ``channels`` are the deployment's channels of that vendor whose secret verified
    the request and which post to ``chat`` (by name, with their settings).
    """

    vendor: Literal["slack", "lark"]
    chat: str | None
    channels: Sequence[tuple[str, SlackSettings | LarkSettings]]
    user: str
    pending_id: str
    decision: Literal["approve", "deny"] | None
    answer: str | None
    # a deny's reason, typed in the message beside the buttons (Slack)
    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class ClickOutcome:
    """What to tell the person who clicked (the chat shows it to them)."""

    text: str
    decided: bool


def decide_click(
    api: Api, click: Click, updater: Callable[[str], Callable[[str], None]]
) -> ClickOutcome:
    """Decide ``click``'s item through its channel, show the outcome, continue the turn later.

    ``updater(channel)`` shows a text in the clicked message of that channel.
    """
    item = api.pending.get(click.pending_id)
    if item is None:
        return ClickOutcome(text="This request no longer exists.", decided=False)
    channel, reason = _channel_for(api, item, click)
    settings = dict(click.channels).get(channel)

    def allowed(item: PendingItem, actor: Actor) -> str | None:
        if reason is not None or settings is None:
            return reason or f"this request was not sent to {channel}"
        if not settings.allows(actor.id):
            return f"not one of the approvers of {channel}"
        return None

    try:
        decided = api.turns.decide(
            item.id,
            verdict_of(click.decision, click.answer, click.note),
            chat_user(click.vendor, click.user, channel),
            check=allowed,
            schedule=api.continuations.schedule,
            resume=False,
        )
    except Forbidden as refused:
        return ClickOutcome(text=f"You cannot decide this request: {refused}.", decided=False)
    except UsageError:
        need = "an answer" if item.kind == "question" else "Approve or Deny"
        return ClickOutcome(text=f"This request needs {need}.", decided=False)
    except AlreadyVoted as exc:
        return ClickOutcome(text=_already_voted(exc.current, exc.person), decided=False)
    except AlreadyResolved as exc:
        return ClickOutcome(text=f"Already decided: {_decided(exc.current)}.", decided=False)
    except Expired:
        return ClickOutcome(text="This request expired before it was decided.", decided=False)
    if decided.item.status == "pending":
        # a vote short of the quorum: the message keeps its buttons for the others
        return ClickOutcome(text=_voted(decided.item), decided=True)
    outcome = _describe(decided.item)
    try:
        updater(channel)(outcome)
    except SendFailed:
        # The decision stands; only the message still shows its buttons.
        log.warning("could not update the chat message of %s", decided.item.id, exc_info=True)
    return ClickOutcome(text=outcome, decided=True)


def _channel_for(api: Api, item: PendingItem, click: Click) -> tuple[str, str | None]:
    """The channel the click decides through, and why it may not (None: it may).

    Of the verified channels posting to the click's chat, the one the item was sent
    to; several can only be channels of one chat and app, so the first by name.
    """
    if not click.channels:
        # audited under the chat's own id: no channel of ours posts there
        where = f"{click.vendor}:{click.chat or 'unknown'}"
        return where, f"no {click.vendor} channel of this deployment posts to this chat"
    try:
        agent = api.agents.get(item.agent)
    except SignoffError:
        return click.channels[0][0], f"the agent {item.agent} is gone"
    reasons: list[tuple[str, str]] = []
    for name, _ in sorted(click.channels, key=lambda pair: pair[0]):
        why = not_sent_to(item, name, agent=agent, outbox=api.outbox)
        if why is None:
            return name, None
        reasons.append((name, why))
    return reasons[0]


def _decided(item: PendingItem) -> str:
    """``Approved by U123 through the ops-slack channel at 2026-12-01 18:05 UTC``."""
    return (
        decided_line(item.status, item.resolved_by, item.resolved_via, item.resolved_at)
        or item.status
    )


def _voted(item: PendingItem) -> str:
    """What a voter is told after a vote short of the quorum: the tally, and that it waits."""
    return f"Your vote is recorded: {item.tally}. It waits for the other approvals."


def _already_voted(item: PendingItem, person: str) -> str:
    """``You already approved this (1 of 2 approvals — alice).``"""
    voted = next((vote for vote in item.votes if vote.person == person), None)
    verb = "approved" if voted is None or voted.decision == "approve" else "denied"
    return f"You already {verb} this ({item.tally})."


def _describe(item: PendingItem) -> str:
    """What the decided chat message says: the card's summary, then who, how and when."""
    subject = item.summary or item.tool or item.question or "the request"
    answer = f" “{item.answer}”" if item.status == "answered" else ""
    told = f"{subject}{answer} — {_decided(item)}"
    if item.tally is not None and item.votes:
        told += f" ({item.tally})"
    if item.status == "approved" and item.edited_args is not None:
        told += f", with changes: {describe_changes(item.args or {}, item.edited_args)}"
    elif item.status == "denied" and item.note:
        told += f". Reason: {item.note}"
    return told
