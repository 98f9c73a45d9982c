"""``/inbox``: a tenant's approvals inbox — what waits, and who decided what.

Two ways in, each seeing one tenant only:

- an API key (``x-api-key`` or a bearer token): the key's tenant. Its viewer opens
  each card read-only and decides through the API routes (``/approvals/{id}/…``,
  as ``apikey:<key id>@<tenant>``);
- an inbox link (``?token=``, ``signoff.keys.tokens.Signer.issue_inbox``), made for one
  approver of one tenant and expiring: its cards take the decision, as that
  approver through the channel ``inbox``, on that tenant's items only. An inbox
  token decides nothing by itself and no resume token opens an inbox.

A route answers HTML when the client asks for ``text/html`` (a browser), JSON
otherwise. The rows are ``signoff.approvals.inbox``'s, the same as ``signoff inbox`` and
``signoff audit`` print.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, cast

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from signoff.api.context import api_of
from signoff.api.docs import ERRORS, errors, json_response, page_responses
from signoff.api.links import CARD_FORM, decision_page, editable, form_decision
from signoff.api.models import ErrorBody
from signoff.approvals.inbox import (
    MAX_PAGE,
    HistoryPage,
    InboxItem,
    InboxPage,
    audit_filter,
    history,
    history_csv,
    history_page,
    inbox_page,
    inbox_row,
)
from signoff.approver.actors import inbox_approver
from signoff.errors import (
    BadForm,
    NotFound,
    TokenExpired,
    TokenForged,
)
from signoff.web import (
    PAGE_HEADERS,
    already_resolved_page,
    confirmation_page,
    error_page,
    expired_page,
    is_cross_site,
    view_page,
)
from signoff.web.inbox_html import INBOX_HEADERS, inbox_html

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

    from signoff.api.context import Api
    from signoff.approvals.inbox import AuditFilter
    from signoff.approver.actors import Actor
    from signoff.store.pending_records import PendingItem

__all__ = ["router"]

router = Router()

# How many history entries the page shows under the pending list.
_PAGE_HISTORY = 50

_Text = Annotated[str | None, Query()]
_Limit = Annotated[int, Query(ge=1, le=MAX_PAGE)]


@dataclass(frozen=True)
class _Viewer:
    """Who looks: a tenant, and the approver of an inbox link (None: an API key)."""

    tenant: str
    name: str
    approver: str | None = None
    token: str | None = None

    @property
    def access(self) -> dict[str, str]:
        """The query every link of the page keeps."""
        return {"token": self.token} if self.token else {}


class _Refused(Exception):
    """A link that opens nothing: answered as a page or as JSON, whichever was asked."""

    def __init__(self, status: int, title: str, detail: str) -> None:
        self.status, self.title, self.detail = status, title, detail
        super().__init__(detail)


def _either(*statuses: int) -> dict[int, OpenAPIResponse]:
    """Error answers as JSON, or as a page for a client that asked for HTML."""
    return {
        status: cast(
            "OpenAPIResponse",
            {
                "description": ERRORS[status]["description"],
                "content": {
                    "application/json": {"model": ErrorBody},
                    "text/html": {"schema": {"type": "string"}},
                },
            },
        )
        for status in statuses
    }


def _wants_html() -> bool:
    accept = router.current_event.headers.get("accept", "") or ""
    return "text/html" in accept.lower()


def _html(status: int, page: str, headers: dict[str, str] = PAGE_HEADERS) -> Response[str]:
    return Response(
        status_code=status, content_type="text/html; charset=utf-8", body=page, headers=headers
    )


def _viewer(api: Api, token: str | None) -> _Viewer:
    """The tenant (and approver) the request may see.

    Raises:
        _Refused: an inbox token that is forged (403) or expired (410).
        Unauthorized: no token, and no valid API key (401).
    """
    if token:
        try:
            grant = api.signer.verify_inbox(token, api.clock.now().timestamp())
        except TokenForged:
            raise _Refused(403, "This inbox link is not valid", "Ask for a new link.") from None
        except TokenExpired:
            raise _Refused(410, "This inbox link expired", "Ask for a new link.") from None
        return _Viewer(grant.tenant, grant.approver, grant.approver, token)
    tenant, key_id = api.caller(router.current_event.headers)
    return _Viewer(tenant, f"apikey:{key_id or 'anonymous'}@{tenant}")


def _refusal(refused: _Refused) -> Response[Any]:
    if _wants_html():
        return _html(refused.status, error_page(refused.status, refused.title, refused.detail))
    error = "forbidden" if refused.status == 403 else "gone"
    return Response(
        status_code=refused.status,
        content_type="application/json",
        body={"error": error, "detail": refused.detail},
    )


def _filters(
    api: Api,
    since: str | None,
    until: str | None,
    agent: str | None,
    tool: str | None,
    decision: str | None,
    actor: str | None,
    channel: str | None,
) -> tuple[AuditFilter, dict[str, str]]:
    given = {
        "since": since,
        "until": until,
        "agent": agent,
        "tool": tool,
        "decision": decision,
        "actor": actor,
        "channel": channel,
    }
    now = api.clock.now().timestamp()
    return audit_filter(now, **given), {k: v for k, v in given.items() if v}


def _card_href(viewer: _Viewer, pending_id: str) -> str:
    from urllib.parse import quote, urlencode

    query = "?" + urlencode(viewer.access) if viewer.access else ""
    return f"/inbox/items/{quote(pending_id, safe='')}{query}"


@router.get(
    "/inbox",
    summary="A tenant's approvals inbox: the items waiting for a decision",
    description=(
        "With an API key (its tenant) or an inbox link's `token` (one approver of one "
        "tenant). JSON by default, one page of `limit` items oldest first, `cursor` for "
        "the next; a client asking for `text/html` gets the page, with the history "
        "(filtered by `since`, `until`, `agent`, `tool`, `decision`, `actor`, `channel`)."
    ),
    responses={
        200: {
            "description": "The pending items (JSON), or the inbox page (HTML)",
            "content": {
                "application/json": {"model": InboxPage},
                "text/html": {"schema": {"type": "string"}},
            },
        },
        **errors(400, 401),
        **_either(403, 410),
    },
    tags=["inbox"],
)
def inbox(
    token: _Text = None,
    limit: _Limit = 50,
    cursor: _Text = None,
    since: _Text = None,
    until: _Text = None,
    agent: _Text = None,
    tool: _Text = None,
    decision: _Text = None,
    actor: _Text = None,
    channel: _Text = None,
) -> Response[Any]:
    api = api_of(router)
    try:
        viewer = _viewer(api, token)
    except _Refused as refused:
        return _refusal(refused)
    now = api.clock.now().timestamp()
    page = inbox_page(api.pending, viewer.tenant, now, limit=limit, cursor=cursor)
    if not _wants_html():
        body = page.model_dump(by_alias=True, mode="json")
        return Response(status_code=200, content_type="application/json", body=body)
    filters, given = _filters(api, since, until, agent, tool, decision, actor, channel)
    past = history_page(api.turns.audit, viewer.tenant, filters, limit=_PAGE_HISTORY)
    document = inbox_html(
        tenant=viewer.tenant,
        viewer=viewer.name,
        items=page.items,
        entries=past.entries,
        card_href={item.pending_id: _card_href(viewer, item.pending_id) for item in page.items},
        filters=given,
        access=viewer.access,
        more_history=past.next is not None,
    )
    return _html(200, document, INBOX_HEADERS)


@router.get(
    "/inbox/audit.json",
    summary="The tenant's audit log as JSON: who decided what, when, through which channel",
    description=(
        "Newest first; refusals are marked. Filters: `since` / `until` (7d, 12h, an ISO "
        "time or epoch seconds; the last 7 days by default), `agent`, `tool`, `decision`, "
        "`actor`, `channel`. One page of `limit` entries; `next` is the `cursor` of the next."
    ),
    responses={200: json_response("The audit entries", HistoryPage), **errors(400, 401, 403, 410)},
    tags=["inbox"],
)
def audit_json(
    token: _Text = None,
    limit: _Limit = 100,
    cursor: _Text = None,
    since: _Text = None,
    until: _Text = None,
    agent: _Text = None,
    tool: _Text = None,
    decision: _Text = None,
    actor: _Text = None,
    channel: _Text = None,
) -> Response[Any]:
    api = api_of(router)
    try:
        viewer = _viewer(api, token)
    except _Refused as refused:
        return _refusal(refused)
    filters, _ = _filters(api, since, until, agent, tool, decision, actor, channel)
    page = history_page(api.turns.audit, viewer.tenant, filters, limit=limit, cursor=cursor)
    body = page.model_dump(by_alias=True, mode="json")
    return Response(status_code=200, content_type="application/json", body=body)


@router.get(
    "/inbox/audit.csv",
    summary="The tenant's audit log as CSV, with the filters of /inbox/audit.json",
    description=(
        "A header row, then one row per entry, newest first (RFC 4180). A cell that "
        "starts with `=`, `+`, `-` or `@` is written with a `'` before it, so a "
        "spreadsheet shows it as text instead of running it as a formula."
    ),
    responses={
        200: {
            "description": "The audit entries",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        },
        **errors(400, 401, 403, 410),
    },
    tags=["inbox"],
)
def audit_csv(
    token: _Text = None,
    since: _Text = None,
    until: _Text = None,
    agent: _Text = None,
    tool: _Text = None,
    decision: _Text = None,
    actor: _Text = None,
    channel: _Text = None,
) -> Response[Any]:
    api = api_of(router)
    try:
        viewer = _viewer(api, token)
    except _Refused as refused:
        return _refusal(refused)
    filters, _ = _filters(api, since, until, agent, tool, decision, actor, channel)
    text = history_csv(history(api.turns.audit, viewer.tenant, filters))
    return Response(
        status_code=200,
        content_type="text/csv; charset=utf-8",
        body=text,
        headers={
            "Content-Disposition": f'attachment; filename="audit-{viewer.tenant}.csv"',
            "Cache-Control": "no-store",
        },
    )


def _tenant_item(api: Api, viewer: _Viewer, pending_id: str) -> PendingItem:
    """The item, if it is the viewer's tenant's (another tenant's is not found, alike)."""
    item = api.pending.get(pending_id)
    if item is None or item.tenant != viewer.tenant:
        raise NotFound("pending item", pending_id)
    return item


def _expires(item: PendingItem) -> str:
    return datetime.fromtimestamp(item.expires_at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


@router.get(
    "/inbox/items/<id>",
    summary="One inbox item's decision card",
    description=(
        "Through an inbox link the card's form decides as its approver; with an API key "
        "the card is read-only (decide through /approvals/{id}/approve or /deny). JSON "
        "(the item's inbox row) unless the client asks for `text/html`."
    ),
    responses={
        200: {
            "description": "The item (JSON) or its card (HTML)",
            "content": {
                "application/json": {"model": InboxItem},
                "text/html": {"schema": {"type": "string"}},
            },
        },
        **errors(400, 401),
        **_either(403, 404, 409, 410),
    },
    tags=["inbox"],
)
def card(id: str, token: _Text = None) -> Response[Any]:
    api = api_of(router)
    try:
        viewer = _viewer(api, token)
    except _Refused as refused:
        return _refusal(refused)
    item = _tenant_item(api, viewer, id)
    now = api.clock.now().timestamp()
    if not _wants_html():
        body = inbox_row(item, now).model_dump(by_alias=True, mode="json")
        return Response(status_code=200, content_type="application/json", body=body)
    if item.status == "expired" or (item.status == "pending" and item.expires_at <= now):
        return _html(410, expired_page(item))
    if item.status != "pending":
        return _html(409, already_resolved_page(item))
    if viewer.token is None:
        return _html(200, view_page(item, expires_text=_expires(item), now=now))
    page = confirmation_page(
        item,
        viewer.token,
        action_path=_card_href(viewer, item.id),
        expires_text=_expires(item),
        editable=editable(api, item),
        now=now,
    )
    return _html(200, page)


@router.post(
    "/inbox/items/<id>",
    summary="Decide an inbox item through an inbox link's card, as its approver",
    # 400, 413 and 415 may also come before the route, from the request's checks, as JSON
    responses={**page_responses(403, 404, 409, 410, 422), **_either(400, 413, 415)},
    tags=["inbox"],
    openapi_extensions=CARD_FORM,
)
def decide(id: str, token: _Text = None) -> Response[str]:
    api = api_of(router)
    event = router.current_event
    host = event.raw_event.get("requestContext", {}).get("domainName") or event.headers.get(
        "host", ""
    )
    if is_cross_site(event.headers, host):
        return _html(403, error_page(403, "Refused", "This form can only be sent from its page."))
    if not token:
        # an API key decides through the API routes, never through a page's form
        page = error_page(403, "This card cannot decide", "Open it from an inbox link.")
        return _html(403, page)
    try:
        viewer = _viewer(api, token)
    except _Refused as refused:
        return _html(refused.status, error_page(refused.status, refused.title, refused.detail))
    try:
        item = _tenant_item(api, viewer, id)
    except NotFound:
        return _html(404, error_page(404, "Nothing to decide", "This request is gone."))
    try:
        answer, decision, reason, changes = form_decision(item, event.decoded_body or "")
    except BadForm as exc:
        return _html(400, error_page(400, "Something is missing", str(exc)))
    tenant = viewer.tenant

    def same_tenant(item: PendingItem, actor: Actor) -> str | None:
        # checked again inside decide, on the item as it is written
        return None if item.tenant == tenant else "the request belongs to another tenant"

    actor = inbox_approver(viewer.approver or viewer.name)
    form = (answer, decision, reason, changes)
    return decision_page(api, item, form, actor, same_tenant, router.lambda_context)
