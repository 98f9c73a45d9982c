"""Turn outcomes as the protocol's 200 / 202 bodies."""

from __future__ import annotations

from time import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from signoff.api.models import ApprovalsState, FinishedBody, PendingBody, VoteBody
from signoff.approvals.escalation import escalation_of
from signoff.clock import iso

if TYPE_CHECKING:
    from datetime import datetime

    from signoff.api.models import EscalationState
    from signoff.durable.results import TurnResult
    from signoff.store.pending_records import PendingItem

__all__ = ["approvals_state", "pending_body", "status_url", "turn_response", "vote_response"]


def status_url(agent: str, session_id: str) -> str:
    return f"/agents/{quote(agent)}/sessions/{quote(session_id)}"


def pending_body(item: PendingItem, events: list[dict[str, Any]]) -> PendingBody:
    """The 202 body of a turn paused on ``item``."""
    from datetime import UTC, datetime

    expires: datetime = datetime.fromtimestamp(item.expires_at, tz=UTC)
    common: dict[str, Any] = {
        "id": item.id,
        "session_id": item.session_id,
        "events": events,
        "status_url": status_url(item.agent, item.session_id),
        "expires_at": iso(expires),
        "summary": item.summary,
        "request": item.request,
        "said": item.said,
        "escalation": escalation_state(item, now=time()),
    }
    if item.kind == "question":
        return PendingBody(
            type="question",
            stop_reason="pending_question",
            question=item.question,
            options=item.options,
            answer_url=f"/questions/{quote(item.id)}/answer",
            **common,
        )
    return PendingBody(
        type="approval",
        stop_reason="pending_approval",
        tool=item.tool,
        args=item.args,
        scope=item.scope.model_dump() if item.scope else None,
        reason=item.reason,
        approve_url=f"/approvals/{quote(item.id)}/approve",
        deny_url=f"/approvals/{quote(item.id)}/deny",
        approvals=approvals_state(item),
        **common,
    )


def approvals_state(item: PendingItem) -> ApprovalsState | None:
    """The quorum and votes of an approval whose rule gives it to several or named people."""
    from datetime import UTC, datetime

    policy = item.policy
    if policy is None or not (policy.counts_votes or policy.approvers):
        return None
    votes = [
        VoteBody(
            person=vote.person,
            actor=vote.actor,
            channel=vote.channel,
            decision=vote.decision,
            at=iso(datetime.fromtimestamp(vote.at, tz=UTC)),
            note=vote.note,
        )
        for vote in item.votes
    ]
    return ApprovalsState(
        needed=policy.approvals,
        deny_quorum=policy.deny_quorum,
        approvers=list(policy.approvers),
        votes=votes,
        line=policy.tally(item.votes),
    )


def vote_response(item: PendingItem) -> tuple[int, dict[str, Any]]:
    """202 after a vote short of the quorum: the turn still waits on ``item``, which
    now carries the vote (``approvals``)."""
    return 202, pending_body(item, []).model_dump(by_alias=True, exclude_none=True)


def escalation_state(item: PendingItem, *, now: float) -> EscalationState | None:
    """Where ``item`` stands on its escalation ladder, or None before its first step."""
    from datetime import UTC, datetime

    from signoff.api.models import EscalationState

    escalation = escalation_of(item)
    if escalation is None:
        return None
    at = escalation.at
    return EscalationState(
        step=escalation.step,
        steps=escalation.steps,
        at=None if at is None else iso(datetime.fromtimestamp(at, tz=UTC)),
        to=list(escalation.to),
        asked=list(escalation.asked),
        line=escalation.line(now),
    )


def turn_response(result: TurnResult) -> tuple[int, dict[str, Any]]:
    """(status code, body) for a turn's result: 200 finished, 202 paused or running."""
    if result.status == "finished":
        body = FinishedBody(
            text=result.text or "",
            session_id=result.session_id,
            events=result.events,
            stop_reason=result.stop_reason,
        )
        return 200, body.model_dump(by_alias=True, exclude_none=True)
    if result.status == "paused" and result.pending is not None:
        return 202, pending_body(result.pending, result.events).model_dump(
            by_alias=True, exclude_none=True
        )
    running = PendingBody(
        type="running",
        session_id=result.session_id,
        events=result.events,
        status_url=status_url(result.agent, result.session_id),
    )
    return 202, running.model_dump(by_alias=True, exclude_none=True)
