"""Turn outcomes as the protocol's 200 / 202 bodies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from signoff.api.models import FinishedBody, PendingBody
from signoff.clock import iso

if TYPE_CHECKING:
    from datetime import datetime

    from signoff.durable.results import TurnResult
    from signoff.store.records import PendingItem

__all__ = ["pending_body", "status_url", "turn_response"]


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
    }
    if item.kind == "question":
        return PendingBody(
            type="question",
            question=item.question,
            options=item.options,
            answer_url=f"/questions/{quote(item.id)}/answer",
            **common,
        )
    return PendingBody(
        type="approval",
        tool=item.tool,
        args=item.args,
        scope=item.scope.model_dump() if item.scope else None,
        reason=item.reason,
        approve_url=f"/approvals/{quote(item.id)}/approve",
        deny_url=f"/approvals/{quote(item.id)}/deny",
        **common,
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
