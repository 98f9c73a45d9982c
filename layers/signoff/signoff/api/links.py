"""``/a/{token}``: the pages behind emailed and posted links.

A ``GET`` only shows what is asked and a form — mail scanners prefetch links,
so nothing changes on a ``GET``. The decision is the form's ``POST``, refused
when it comes from another site. A ``view`` link (the only kind a chat channel
with ``approvers`` is sent) shows the item without a form, and its ``POST`` is 403.
A deny may carry a reason and, for an editable tool, an approval its changes
(``signoff.web.decision_form``); the token stays bound to the arguments as asked.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from signoff.api.authorize import check_token, item_for_token, link_decider
from signoff.api.body import form_body
from signoff.api.context import api_of
from signoff.api.docs import page_responses
from signoff.approver.edits import MAX_REASON_CHARS
from signoff.durable.decide import verdict_of
from signoff.errors import (
    AlreadyResolved,
    AlreadyVoted,
    BadForm,
    Expired,
    Forbidden,
    InvalidChanges,
    NotFound,
    SignoffError,
    TokenExpired,
    TokenForged,
    UsageError,
)
from signoff.web import (
    PAGE_HEADERS,
    already_resolved_page,
    already_voted_page,
    chosen_answer,
    confirmation_page,
    error_page,
    expired_page,
    is_cross_site,
    outcome_page,
    parse_form,
    view_page,
    vote_page,
)
from signoff.web.decision_form import changes_from, reason_from

if TYPE_CHECKING:
    from signoff.api.context import Api
    from signoff.approver.actors import Actor
    from signoff.durable.decide import Check
    from signoff.store.pending_records import PendingItem

__all__ = ["CARD_FORM", "decision_page", "editable", "form_decision", "router"]

router = Router()

# What a card's form POSTs (``signoff.web.pages``): here and on the inbox's cards.
CARD_FORM = form_body(
    {
        "decision": {"type": "string", "enum": ["approve", "deny", "answer"]},
        "choice": {"type": "string"},
        "answer": {"type": "string"},
        "token": {"type": "string"},
        "reason": {"type": "string", "maxLength": MAX_REASON_CHARS},
    },
    patterns={"^arg\\.": {"type": "string"}},
)


def _html(status: int, page: str) -> Response[str]:
    return Response(
        status_code=status, content_type="text/html; charset=utf-8", body=page, headers=PAGE_HEADERS
    )


def _load(token: str) -> tuple[PendingItem | None, bool, Response[str] | None]:
    """The item a link is about and whether the link only views it, or the refusal page."""
    api = api_of(router)
    try:
        verified = api.signer.verify(token, api.clock.now().timestamp())
    except TokenForged:
        page = error_page(403, "This link is not valid", "Ask for a new link.")
        return None, False, _html(403, page)
    except TokenExpired as exc:
        item = api.pending.get(exc.pending_id) if exc.pending_id else None
        return None, False, _html(410, expired_page(item))
    # A ``view`` token (a chat channel with approvers is sent only those) permits no decision.
    view_only = verified.action == "view"
    try:
        return item_for_token(api, verified), view_only, None
    except NotFound:
        page = error_page(404, "Nothing to decide", "This request is gone.")
        return None, view_only, _html(404, page)


@router.get(
    "/a/<token>",
    summary="The page behind a link",
    responses=page_responses(403, 404, 409, 410),
    tags=["links"],
)
def show(token: str) -> Response[str]:
    item, view_only, refusal = _load(token)
    if refusal is not None or item is None:
        return refusal or _html(404, error_page(404, "Nothing to decide", ""))
    now = api_of(router).clock.now().timestamp()
    if item.status == "expired" or (item.status == "pending" and item.expires_at <= now):
        return _html(410, expired_page(item))
    if item.status != "pending":
        return _html(409, already_resolved_page(item))
    expires = datetime.fromtimestamp(item.expires_at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    if view_only:
        # the item as it is, and no form: this link was not made to decide it
        return _html(200, view_page(item, expires_text=expires, now=now))
    page = confirmation_page(
        item,
        token,
        action_path=f"/a/{token}",
        expires_text=expires,
        editable=editable(api_of(router), item),
        now=now,
    )
    return _html(200, page)


def form_decision(
    item: PendingItem, body: str
) -> tuple[str | None, str, str | None, dict[str, Any] | None]:
    """What a card's form POSTed: the answer, the decision, the reason, the changes.

    Raises:
        BadForm: a malformed form, or a decision other than approve or deny.
    """
    form = parse_form(body)
    if item.kind == "question":
        return chosen_answer(form), "answer", None, None
    decision = form.get("decision", "")
    if decision not in ("approve", "deny"):
        raise BadForm("decision", "must be approve or deny")
    # a deny says why; an approval takes the fields changed (the reason is its note)
    changes = changes_from(form, item) if decision == "approve" else None
    return None, decision, reason_from(form), changes


def editable(api: Api, item: PendingItem) -> bool:
    """Whether the item's tool takes changes, as its agent declares it now."""
    try:
        tool = api.agents.get(item.agent).tools.get(item.tool or "")
    except SignoffError:
        return False
    return tool is not None and tool.editable


@router.post(
    "/a/<token>",
    summary="Decide through a link's form",
    responses=page_responses(400, 403, 404, 409, 410, 413, 415, 422),
    tags=["links"],
    openapi_extensions=CARD_FORM,
)
def decide(token: str) -> Response[str]:
    api = api_of(router)
    event = router.current_event
    host = event.raw_event.get("requestContext", {}).get("domainName") or event.headers.get(
        "host", ""
    )
    if is_cross_site(event.headers, host):
        return _html(403, error_page(403, "Refused", "This form can only be sent from its page."))
    item, view_only, refusal = _load(token)
    if refusal is not None or item is None:
        return refusal or _html(404, error_page(404, "Nothing to decide", ""))
    if view_only:
        # Refused before the form is read: whatever it says, a view link decides nothing.
        page = error_page(403, "This link cannot decide", "It only shows the request.")
        return _html(403, page)
    try:
        answer, decision, reason, changes = form_decision(item, event.decoded_body or "")
        granted = api.signer.verify(token, api.clock.now().timestamp())
        check_token(api, item, granted, decision)  # type: ignore[arg-type]
    except BadForm as exc:
        return _html(400, error_page(400, "Something is missing", str(exc)))
    except TokenForged:
        return _html(403, error_page(403, "This link is not valid", "Ask for a new link."))
    actor, check = link_decider(api, granted)
    form = (answer, decision, reason, changes)
    return decision_page(api, item, form, actor, check, router.lambda_context)


def decision_page(
    api: Api,
    item: PendingItem,
    form: tuple[str | None, str, str | None, dict[str, Any] | None],
    actor: Actor,
    check: Check,
    lambda_context: Any,
) -> Response[str]:
    """Make a card form's decision (``form_decision``'s) as ``actor``; the page of what
    happened: the outcome, a vote's tally, or why nothing was decided."""
    answer, decision, reason, changes = form
    try:
        decided = api.turns.decide(
            item.id,
            verdict_of(None if answer is not None else decision, answer, reason, changes),  # type: ignore[arg-type]
            actor,
            check=check,
            schedule=api.continuations.schedule,
            deadline=api.deadline(lambda_context, interactive=True),
        )
    except Forbidden as refused:
        return _html(403, error_page(403, "You cannot decide this request", str(refused)))
    except InvalidChanges as invalid:
        # nothing was decided: the link still works, with other changes or none
        return _html(422, error_page(422, "These changes cannot be approved", str(invalid)))
    except UsageError as refused:
        # changes on an approval that needs several people: nothing was decided
        return _html(400, error_page(400, "This cannot be approved with changes", str(refused)))
    except AlreadyVoted as exc:
        return _html(409, already_voted_page(exc.current, exc.person))
    except AlreadyResolved as exc:
        return _html(409, already_resolved_page(exc.current))
    except Expired as exc:
        return _html(410, expired_page(exc.current))
    if decided.item.status == "pending":
        return _html(200, vote_page(decided.item))
    return _html(200, outcome_page(decided.item))
