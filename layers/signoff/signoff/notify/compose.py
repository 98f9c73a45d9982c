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
    from signoff.tokens import Signer

__all__ = ["Composer"]


@dataclass(frozen=True, kw_only=True)
class Composer:
    """Builds notifications whose links point at ``public_url`` and expire with the item."""

    signer: Signer
    public_url: str

    def for_item(self, item: PendingItem) -> Notification:
        """The approval or question notification of ``item``."""
        expires = iso(datetime.fromtimestamp(item.expires_at, tz=UTC))
        base = self.public_url.rstrip("/")
        pid = quote(item.id)
        if item.kind == "question":
            token = self.signer.issue(item.id, "answer", item.tenant, item.args, item.expires_at)
            options = f"\n\nSuggested answers: {', '.join(item.options)}" if item.options else ""
            return Notification(
                kind="question",
                agent=item.agent,
                run_id=item.run_id,
                title=f"{item.agent} asks: {item.question}",
                body=f"{item.question}{options}",
                resume_token=token,
                expires_at=expires,
                pending_id=item.id,
                session_id=item.session_id,
                tenant=item.tenant,
                question=item.question,
                options=item.options,
                link_url=f"{base}/a/{quote(token)}",
                answer_url=f"{base}/questions/{pid}/answer?token={quote(token)}",
            )
        token = self.signer.issue(item.id, "decide", item.tenant, item.args, item.expires_at)
        arguments = json.dumps(item.args or {}, indent=2, ensure_ascii=False, sort_keys=True)
        return Notification(
            kind="approval",
            agent=item.agent,
            run_id=item.run_id,
            title=f"Approval needed: {item.tool} ({item.agent})",
            body=f"{item.tool} with arguments:\n{arguments}\n\nWhy: {item.reason}",
            resume_token=token,
            expires_at=expires,
            pending_id=item.id,
            session_id=item.session_id,
            tenant=item.tenant,
            tool=item.tool,
            args=item.args,
            link_url=f"{base}/a/{quote(token)}",
            approve_url=f"{base}/approvals/{pid}/approve?token={quote(token)}",
            deny_url=f"{base}/approvals/{pid}/deny?token={quote(token)}",
        )
