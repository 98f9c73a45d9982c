"""Builders of what many tests pass around: a channel's notifications, the store's pending items.

Each builds one plain record with every field a channel, a page or a row could show
(or leak) set; a test changes what it asserts on through keyword arguments, which
go to pydantic's ``model_copy(update=...)`` and so must be field names.

The notifications ask ``customer-service`` to approve ``issue_refund`` (or answer
which order), with links signed by ``token``; the pending items are a refund for
tenant ``acme`` in ``production``, requested at ``T0`` and due an hour later.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from signoff.channels.notification import Notification
from signoff.store.pending_records import PendingItem

__all__ = [
    "T0",
    "answer_url",
    "approval_notification",
    "approve_url",
    "deny_url",
    "link_url",
    "pending_approval",
    "pending_question",
    "question_notification",
]

T0: Final = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
PAGES: Final = "https://signoff.example.com"
API: Final = "https://api.example.com"


def link_url(token: str) -> str:
    return f"{PAGES}/a/{token}"


def approve_url(pending_id: str, token: str) -> str:
    return f"{API}/pending-approvals/{pending_id}/approve?token={token}"


def deny_url(pending_id: str, token: str) -> str:
    return f"{API}/pending-approvals/{pending_id}/deny?token={token}"


def answer_url(pending_id: str, token: str) -> str:
    return f"{API}/pending-questions/{pending_id}/answer?token={token}"


def approval_notification(
    pending_id: str = "p1", *, token: str = "token-1", **changes: Any
) -> Notification:
    """An approval of ``issue_refund``, its links carrying ``token``."""
    base = Notification(
        kind="approval",
        agent="customer-service",
        run_id="run-1",
        pending_id=pending_id,
        title="Approve issue_refund?",
        body='issue_refund {"orderId": "A-17", "amount": 25}',
        tool="issue_refund",
        args={"orderId": "A-17", "amount": 25},
        resume_token=token,
        expires_at="2026-01-02T00:00:00.000Z",
        link_url=link_url(token),
        approve_url=approve_url(pending_id, token),
        deny_url=deny_url(pending_id, token),
    )
    return base.model_copy(update=changes)


def question_notification(
    pending_id: str = "p2", *, token: str = "token-2", **changes: Any
) -> Notification:
    """A question with two options, its links carrying ``token``."""
    base = Notification(
        kind="question",
        agent="customer-service",
        run_id="run-1",
        pending_id=pending_id,
        title="Which order?",
        body="Which order do you mean?",
        question="Which order do you mean?",
        options=["A-17", "A-18"],
        resume_token=token,
        answer_url=answer_url(pending_id, token),
        link_url=link_url(token),
    )
    return base.model_copy(update=changes)


def pending_approval(
    pending_id: str = "p1", *, session_id: str = "s1", **changes: Any
) -> PendingItem:
    """A pending approval of ``refund`` that expires an hour after ``T0``."""
    base = PendingItem(
        id=pending_id,
        kind="approval",
        session_id=session_id,
        run_id="run-1",
        agent="refunds",
        tenant="acme",
        environment="production",
        call_id=f"call-{pending_id}",
        tool="refund",
        args={"order": "A-17", "amount": 25},
        reason="refunds need a human",
        requested_at=T0,
        expires_at=T0 + 3600,
    )
    return base.model_copy(update=changes)


def pending_question(
    pending_id: str = "p1", *, session_id: str = "s1", **changes: Any
) -> PendingItem:
    """A pending question with two options, otherwise ``pending_approval``'s."""
    question = pending_approval(
        pending_id,
        session_id=session_id,
        kind="question",
        tool=None,
        args=None,
        reason=None,
        question="Which warehouse ships it?",
        options=["Berlin", "Lyon"],
    )
    return question.model_copy(update=changes)
