"""What a person is told about a pending item, with signed, expiring links."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from signoff.approvals.escalation import escalation_of
from signoff.approver.card import Card, Escalation, readable_args
from signoff.channels.notification import Notification
from signoff.clock import iso

if TYPE_CHECKING:
    from signoff.keys.tokens import Action, Signer
    from signoff.store.pending_records import PendingItem

__all__ = ["INBOX_LINK_TTL", "Composer", "card_of"]

# How long an approval mail's inbox link works, from the ask (seconds).
INBOX_LINK_TTL: Final = 7 * 86400


@dataclass(frozen=True, kw_only=True)
class Composer:
    """Builds notifications whose links point at ``public_url`` and expire with the item."""

    signer: Signer
    public_url: str

    def for_item(
        self,
        item: PendingItem,
        *,
        recipient: str | None = None,
        channel: str | None = None,
        deciding: bool = True,
        inbox: bool = False,
    ) -> Notification:
        """The approval or question notification of ``item``.

        With ``recipient`` (and the ``channel`` it is mailed through) its links are
        that person's own: the token names them, and a decision through it is theirs.

        With ``deciding=False`` it carries no token that decides — no resume token,
        no approve / deny / answer URL — only a ``view`` link, whose page shows the
        item and takes no decision. That is what a chat channel listing ``approvers``
        gets: a token naming nobody decides as whoever holds it, and everyone who
        reads the chat message would hold it, approvers or not.

        With ``inbox`` (and a ``recipient``) it also links the recipient's approvals
        inbox (``inboxUrl``), signed for them until ``INBOX_LINK_TTL`` after the ask.
        """
        base = self.public_url.rstrip("/")
        pid = quote(item.id)
        action: Action = ("answer" if item.kind == "question" else "decide") if deciding else "view"
        token = self.signer.issue(
            item.id,
            action,
            item.tenant,
            item.args,
            item.expires_at,
            recipient=recipient,
            channel=channel,
        )
        signed = quote(token)
        card = card_of(item)
        common: dict[str, Any] = {
            "agent": item.agent,
            "run_id": item.run_id,
            "expires_at": iso(datetime.fromtimestamp(item.expires_at, tz=UTC)),
            "requested_at": iso(datetime.fromtimestamp(item.requested_at, tz=UTC)),
            "pending_id": item.id,
            "session_id": item.session_id,
            "tenant": item.tenant,
            "link_url": f"{base}/a/{signed}",
            "summary": card.summary,
            "request": item.request,
            "said": item.said,
            "environment": item.environment,
        }
        if card.escalation is not None:
            common |= _escalation_fields(card.escalation)
        if card.approvals is not None:
            common["approvals"] = card.approvals
        if deciding:
            common["resume_token"] = token
        if inbox and recipient is not None:
            # from the ask, not the send: a retried mail carries the same link
            until = item.requested_at + INBOX_LINK_TTL
            opened = self.signer.issue_inbox(item.tenant, recipient, until)
            common["inbox_url"] = f"{base}/inbox?token={quote(opened)}"
        if item.kind == "question":
            options = f"\n\nSuggested answers: {', '.join(item.options)}" if item.options else ""
            if deciding:
                common["answer_url"] = f"{base}/questions/{pid}/answer?token={signed}"
            else:
                common["note"] = _answer_elsewhere(item)
            return Notification(
                kind="question",
                title=f"{item.agent} asks: {item.question}",
                body=f"{item.question}{options}",
                question=item.question,
                options=item.options,
                **common,
            )
        if deciding:
            common["approve_url"] = f"{base}/approvals/{pid}/approve?token={signed}"
            common["deny_url"] = f"{base}/approvals/{pid}/deny?token={signed}"
        # The body is the card as text, its arguments as JSON last: a channel that shows
        # only the body still shows the tool and its input.
        return Notification(
            kind="approval",
            title=f"Approve? {card.summary}",
            body=_body(card, item.requested_at),
            tool=item.tool,
            args=item.args,
            reason=item.reason,
            **common,
        )


def card_of(item: PendingItem) -> Card:
    """The decision card of ``item`` (``signoff.approver.card``), as every surface shows it."""
    return Card(
        kind=item.kind,
        agent=item.agent,
        tenant=item.scope.tenant if item.scope else item.tenant,
        environment=item.scope.environment if item.scope else item.environment,
        summary=item.summary
        or (readable_args(item.tool or "", item.args) if item.tool else item.question or ""),
        requested_at=item.requested_at,
        expires_at=item.expires_at,
        tool=item.tool,
        args=item.args,
        question=item.question,
        options=tuple(item.options or ()),
        reason=item.reason,
        request=item.request,
        said=item.said,
        escalation=escalation_of(item),
        approvals=item.tally,
    )


def _escalation_fields(escalation: Escalation) -> dict[str, Any]:
    """The notification's escalation fields: where the item stands on its ladder."""
    at = escalation.at
    return {
        "escalation_step": escalation.step,
        "escalation_steps": escalation.steps,
        "escalated_at": None if at is None else iso(datetime.fromtimestamp(at, tz=UTC)),
        "escalated_to": list(escalation.to),
    }


def _body(card: Card, now: float) -> str:
    """The card's rows as text after its summary (the title), then the tool's arguments."""
    return card.text(now).split("\n", 2)[-1].strip()


def _answer_elsewhere(item: PendingItem) -> str:
    """Where the answer goes when the chat's buttons cannot carry it (a written one)."""
    route = f"POST /questions/{item.id}/answer"
    if item.options:
        return (
            "Choose one of the answers below. Any other answer is given through "
            f"the signoff API ({route}) or another channel of the agent."
        )
    return (
        "This chat cannot take a written answer: answer through the signoff API "
        f"({route}) or another channel of the agent."
    )
