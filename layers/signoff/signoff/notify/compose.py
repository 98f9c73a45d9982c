"""What a person is told about a pending item, with signed, expiring links."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import quote

from signoff.clock import iso
from signoff.notify.notification import Notification

if TYPE_CHECKING:
    from signoff.store.records import PendingItem
    from signoff.tokens import Action, Signer

__all__ = ["Composer"]


@dataclass(frozen=True, kw_only=True)
class Composer:
    """Builds notifications whose links point at ``public_url`` and expire with the item."""

    signer: Signer
    public_url: str

    def for_item(
        self, item: PendingItem, *, recipient: str | None = None, channel: str | None = None
    ) -> Notification:
        """The approval or question notification of ``item``.

        With ``recipient`` (and the ``channel`` it is mailed through) its links are
        that person's own: the token names them, and a decision through it is theirs.
        """
        expires = iso(datetime.fromtimestamp(item.expires_at, tz=UTC))
        base = self.public_url.rstrip("/")
        pid = quote(item.id)
        action: Action = "answer" if item.kind == "question" else "decide"
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
        common = {
            "agent": item.agent,
            "run_id": item.run_id,
            "resume_token": token,
            "expires_at": expires,
            "pending_id": item.id,
            "session_id": item.session_id,
            "tenant": item.tenant,
            "link_url": f"{base}/a/{signed}",
        }
        if item.kind == "question":
            options = f"\n\nSuggested answers: {', '.join(item.options)}" if item.options else ""
            return Notification(
                kind="question",
                title=f"{item.agent} asks: {item.question}",
                body=f"{item.question}{options}",
                question=item.question,
                options=item.options,
                answer_url=f"{base}/questions/{pid}/answer?token={signed}",
                **common,
            )
        arguments = json.dumps(item.args or {}, indent=2, ensure_ascii=False, sort_keys=True)
        return Notification(
            kind="approval",
            title=f"Approval needed: {item.tool} ({item.agent})",
            body=f"{item.tool} with arguments:\n{arguments}\n\nWhy: {item.reason}",
            tool=item.tool,
            args=item.args,
            approve_url=f"{base}/approvals/{pid}/approve?token={signed}",
            deny_url=f"{base}/approvals/{pid}/deny?token={signed}",
            **common,
        )
