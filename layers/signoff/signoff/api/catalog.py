"""Read-only routes: the agents, an agent's resolved config (JSON, and the page of every
agent's), a session's status and decisions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from signoff.agents.describe import describe_agent
from signoff.api.context import api_of
from signoff.api.docs import errors, json_response, page_responses
from signoff.api.models import AgentSummary, SessionDecision, SessionStatusBody
from signoff.api.shapes import pending_body
from signoff.api.waiting import MAX_WAIT, longest_pause, wait_for_chunk
from signoff.clock import iso
from signoff.errors import AuthFailed, ConfigError, NotFound, UnknownAgent
from signoff.web import PAGE_HEADERS, error_page
from signoff.web.config_html import CONFIG_HEADERS, CONFIG_PAGE_PATH, config_html

if TYPE_CHECKING:
    from signoff.store.session_records import SessionRecord

__all__ = ["router"]

router = Router()


@router.get(
    "/agents",
    summary="List the agents",
    responses={200: json_response("The agents", list[AgentSummary]), **errors(401)},
    tags=["agents"],
)
def list_agents() -> list[dict[str, str]]:
    api = api_of(router)
    api.tenant(router.current_event.headers)
    listed: list[AgentSummary] = []
    for name in api.agents.names():
        try:
            summary = AgentSummary(name=name, description=api.agents.get(name).config.description)
        except ConfigError:
            # One broken agent must not hide the others. What is wrong (file, field)
            # is in the function's log from its cold start, not in the response.
            summary = AgentSummary(name=name, description="", status="misconfigured")
        listed.append(summary)
    return [summary.model_dump() for summary in listed]


@router.get(
    "/agents/<name>/config",
    summary="An agent's resolved config (never a secret)",
    responses={200: json_response("The agent's config", dict[str, Any]), **errors(401, 404)},
    tags=["agents"],
)
def agent_config(name: str) -> dict[str, Any]:
    api = api_of(router)
    api.tenant(router.current_event.headers)
    return describe_agent(api.agents.get(name), api.deployment)


@router.get(
    CONFIG_PAGE_PATH,
    summary="Every agent's resolved config as a page (?agent=<name>: one agent)",
    description=(
        "loopengine's config page, for a browser: the bodies of `GET /agents/{name}/config` "
        "drawn as HTML — prompt, model, tools with their JSON schemas and parallel-safety, "
        "the rules the gate enforces, the channels of each notification kind, which hooks "
        "are the agent's own. Never a secret. Behind the API key, as the JSON route."
    ),
    # a query the route cannot read (agent given twice) is refused before it, as JSON
    responses={**page_responses(401, 404), **errors(400)},
    tags=["agents"],
)
def agent_config_page(
    agent: Annotated[str | None, Query(description="One agent's name; absent: every agent")] = None,
) -> Response[str]:
    api = api_of(router)
    try:
        api.tenant(router.current_event.headers)
    except AuthFailed as refused:
        return _page(401, error_page(401, "An API key is needed", str(refused)), PAGE_HEADERS)
    names = api.agents.names()
    if agent is not None and agent not in names:
        # the JSON route's answer, as a page (the caller is authenticated: the names are its)
        unknown = str(UnknownAgent(agent, names))
        return _page(404, error_page(404, "No such agent", unknown), PAGE_HEADERS)
    shown: list[tuple[str, dict[str, Any] | None]] = []
    for name in [agent] if agent is not None else names:
        try:
            shown.append((name, describe_agent(api.agents.get(name), api.deployment)))
        except ConfigError:
            # One broken agent must not hide the others; what is wrong stays in the
            # function's log from its cold start, as the JSON route keeps it.
            shown.append((name, None))
    return _page(200, config_html(names, shown, selected=agent))


def _page(status: int, page: str, headers: dict[str, str] = CONFIG_HEADERS) -> Response[str]:
    """A page with the headers of its stylesheet (an error page has the link pages')."""
    return Response(
        status_code=status, content_type="text/html; charset=utf-8", body=page, headers=headers
    )


@router.get(
    "/agents/<name>/sessions/<id>",
    summary="A session's status and events; ?after=N returns only newer events",
    description=(
        "With `wait=S` (at most 25 seconds) the answer waits until an event after `after` "
        "is committed while the turn runs or waits for a person, or until `S` seconds "
        "passed: a long-poll, with the same body."
    ),
    responses={200: json_response("The session", SessionStatusBody), **errors(400, 401, 404)},
    tags=["turns"],
)
def session_status(
    name: str,
    id: str,
    after: Annotated[int, Query(ge=0)] = 0,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT)] = 0,
) -> dict[str, Any]:
    api = api_of(router)
    tenant = api.tenant(router.current_event.headers, name)
    record = _owned(api, name, id, tenant)
    events, count = _events_after(api, record, after)
    if wait > 0 and not events and record.status in ("running", "paused"):
        # Nothing new yet and more may come: wait for the next chunk, within the
        # invocation's own time too, then answer with the session as it is then.
        until = min(
            api.clock.monotonic() + wait, api.deadline(router.lambda_context, interactive=True)
        )
        wait_for_chunk(
            api.sessions,
            id,
            record.next_seq,
            until=until,
            clock=api.clock,
            longest=longest_pause(record.status),
        )
        record = _owned(api, name, id, tenant)
        events, count = _events_after(api, record, after)
    pending = None
    # a paused session's reason is its pause's, never an earlier turn's finish
    stop_reason = None if record.status == "paused" else record.stop_reason
    if record.status == "paused" and record.pending_id:
        item = api.pending.get(record.pending_id)
        if item is not None:
            pending = pending_body(item, [])
            # as the 202 of the pause said it: the turn stopped to wait on a person
            stop_reason = pending.stop_reason
    body = SessionStatusBody(
        session_id=record.session_id,
        agent=record.agent,
        status=record.status,
        pending=pending,
        decisions=_decisions(api, record),
        text=record.text,
        stop_reason=stop_reason,
        events=events,
        next=count,
    )
    return body.model_dump(by_alias=True, exclude_none=True)


def _owned(api: Any, name: str, id: str, tenant: str) -> SessionRecord:
    """The session ``id`` of agent ``name``, if ``tenant`` owns it.

    Raises:
        NotFound: no such session, or another agent's or tenant's (the same answer).
    """
    record: SessionRecord | None = api.sessions.load(id)
    if record is None or record.agent != name or record.tenant != tenant:
        raise NotFound("session", id)
    return record


def _decisions(api: Any, record: SessionRecord) -> list[SessionDecision]:
    """The session's decisions from its audit trail (refusals and gate rules left out):
    people's, the expiry's and an escalation ladder's final step's."""
    return [
        SessionDecision(
            pending_id=entry.pending_id or "",
            decision=entry.decision,
            actor=entry.actor,
            channel=entry.channel or "",
            at=iso(datetime.fromtimestamp(entry.at, tz=UTC)),
            tool=entry.tool,
            note=entry.reason or None if entry.kind in ("human", "escalation") else None,
        )
        for entry in api.turns.audit.for_subject(record.session_id, rules=False)
        if entry.kind in ("human", "expiry", "escalation")
    ]


def _events_after(api: Any, record: SessionRecord, after: int) -> tuple[list[dict[str, Any]], int]:
    """The session's events after its ``after``-th, and how many it holds.

    The log is read from its newest chunk back, only as far as the new events go
    (none: no read).
    """
    wanted = record.event_count - after
    newest_first: list[list[dict[str, Any]]] = []
    if wanted > 0 and record.next_seq > record.first_seq:
        found = 0
        chunks = api.sessions.read_log_back(
            record.session_id, from_seq=record.first_seq, to_seq=record.next_seq - 1
        )
        for chunk in chunks:
            newest_first.append(chunk.events)
            found += len(chunk.events)
            if found >= wanted:
                break
    events = [event for chunk in reversed(newest_first) for event in chunk]
    return events[max(0, len(events) - wanted) :] if wanted > 0 else [], record.event_count
