"""Approve, deny, answer: the protocol's routes and loopengine's durable aliases.

Every route returns the same 200 / 202 family as ``POST /messages``: the turn
finished, or it paused again on the next decision. A deny may say why (the
model reads it in the call's result); an approval may change the arguments of
a tool declared editable (``signoff.approver.edits``). Both bodies are optional.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from signoff.api.authorize import decider_for
from signoff.api.context import api_of
from signoff.api.docs import APPROVE_RESPONSES, TURN_RESPONSES
from signoff.api.models import AnswerBody, ApproveBody, DecisionBody, DenyBody
from signoff.api.shapes import turn_response, vote_response
from signoff.durable.decide import verdict_of
from signoff.errors import NotFound
from signoff.telemetry import metrics_for_turn, resolve_latency

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.store.pending_records import PendingItem

__all__ = ["router"]

router = Router()


def _token() -> str | None:
    """A resume token given with an API call (header or query), instead of an API key."""
    event = router.current_event
    return event.headers.get("x-signoff-token") or event.get_query_string_value("token")


def _item(pending_id: str, kind: Literal["approval", "question"]) -> PendingItem:
    item = api_of(router).pending.get(pending_id)
    if item is None or item.kind != kind:
        raise NotFound(f"pending {kind}", pending_id)
    return item


def _decide(
    pending_id: str,
    decision: Literal["approve", "deny"],
    note: str | None = None,
    args: Mapping[str, Any] | None = None,
) -> Response[dict[str, object]]:
    return _resolve(pending_id, "approval", decision, decision=decision, note=note, args=args)


def _answer(pending_id: str, answer: str) -> Response[dict[str, object]]:
    return _resolve(pending_id, "question", "answer", answer=answer)


def _resolve(
    pending_id: str,
    kind: Literal["approval", "question"],
    permission: Literal["approve", "deny", "answer"],
    *,
    decision: Literal["approve", "deny"] | None = None,
    answer: str | None = None,
    note: str | None = None,
    args: Mapping[str, Any] | None = None,
) -> Response[dict[str, object]]:
    """Check who decides, apply the decision once, answer with the turn's outcome."""
    started = time.perf_counter()
    api = api_of(router)
    item = _item(pending_id, kind)
    # A token is checked against the arguments as asked (its hash binds it to what
    # the approver saw); changes are a new decision on top, checked by Turns.decide.
    actor, check = decider_for(
        api, item, permission, headers=router.current_event.headers, token=_token()
    )
    decided = api.turns.decide(
        item.id,
        verdict_of(decision, answer, note, args),
        actor,
        check=check,
        schedule=api.continuations.schedule,
        deadline=api.deadline(router.lambda_context, interactive=True),
    )
    result = decided.result
    if result is None:
        # a vote short of its item's quorum: the turn waits for more
        resolve_latency(started)
        status, payload = vote_response(decided.item)
        return Response(status_code=status, content_type="application/json", body=payload)
    metrics_for_turn("resumed", result)
    resolve_latency(started)
    status, payload = turn_response(result)
    return Response(status_code=status, content_type="application/json", body=payload)


@router.post(
    "/approvals/<id>/approve",
    summary="Approve a pending tool call, as asked or with changed arguments",
    responses=APPROVE_RESPONSES,
    tags=["decisions"],
)
def approve(
    id: str, body: Annotated[ApproveBody | None, Body()] = None
) -> Response[dict[str, object]]:
    given = body or ApproveBody()
    return _decide(id, "approve", given.note, given.args)


@router.post(
    "/approvals/<id>/deny",
    summary="Deny a pending tool call, optionally saying why",
    responses=TURN_RESPONSES,
    tags=["decisions"],
)
def deny(id: str, body: Annotated[DenyBody | None, Body()] = None) -> Response[dict[str, object]]:
    return _decide(id, "deny", (body or DenyBody()).reason)


@router.post(
    "/questions/<id>/answer",
    summary="Answer the agent's question",
    responses=TURN_RESPONSES,
    tags=["decisions"],
)
def answer_question(id: str, body: AnswerBody) -> Response[dict[str, object]]:
    return _answer(id, body.answer)


@router.post(
    "/pending-approvals/<id>/resolve",
    summary="Approve or deny (loopengine's durable alias)",
    responses=TURN_RESPONSES,
    tags=["decisions"],
)
def resolve_approval(id: str, body: DecisionBody) -> Response[dict[str, object]]:
    return _decide(id, body.decision, body.note)


@router.post(
    "/pending-questions/<id>/answer",
    summary="Answer a question (loopengine's durable alias)",
    responses=TURN_RESPONSES,
    tags=["decisions"],
)
def answer_pending_question(id: str, body: AnswerBody) -> Response[dict[str, object]]:
    return _answer(id, body.answer)
