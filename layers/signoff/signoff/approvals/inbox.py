"""The approvals inbox: a tenant's pending items and its history of decisions.

One computation backs every view of it — ``GET /inbox`` and its exports
(``signoff.api.inbox``) and ``signoff inbox`` / ``signoff audit`` in the terminal —
so the rows and filters are the same wherever they are read. Both lists come
from the tenant's own partition of the ``by-tenant`` index (``InboxPending.of_tenant``,
``Audit.of_tenant``): reading one tenant never reads the others'.

The CSV export quotes as RFC 4180 says (the ``csv`` module), and a cell that a
spreadsheet would run as a formula (one starting with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return) is written with a ``'`` before it: tool names,
reasons and actors come from models and users (OWASP's "CSV injection").
"""

import base64
import io
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from signoff.approver.card import readable_args
from signoff.clock import iso
from signoff.errors import BadInput

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from signoff.store.base import Audit, InboxPending
    from signoff.store.pending_records import PendingItem
    from signoff.store.records import AuditEntry

__all__ = [
    "CSV_COLUMNS",
    "DEFAULT_HISTORY_DAYS",
    "AuditFilter",
    "HistoryEntry",
    "HistoryPage",
    "InboxItem",
    "InboxPage",
    "InboxVote",
    "audit_filter",
    "csv_cell",
    "history",
    "history_csv",
    "history_page",
    "history_row",
    "inbox_page",
    "inbox_row",
    "parse_cursor",
    "parse_duration",
    "parse_moment",
    "pending_rows",
]

# The history a view shows when no ``since`` is given.
DEFAULT_HISTORY_DAYS: Final = 7
MAX_PAGE: Final = 500
_DURATION = re.compile(r"^(\d+)([smhdw])$")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_RULE = re.compile(r"^matched rule '(.+)'$")
# What a spreadsheet reads as the start of a formula (OWASP: CSV injection).
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")


class _Wire(BaseModel):
    """camelCase on the wire, snake_case in Python (as ``signoff.api.models``)."""

    model_config = ConfigDict(defer_build=True, alias_generator=to_camel, populate_by_name=True)


class InboxVote(_Wire):
    """One vote on an item that needs more than one approval."""

    person: str
    actor: str
    channel: str
    at: str = Field(description="RFC 3339")
    decision: str


class InboxItem(_Wire):
    """One item waiting for the tenant's approvers, as the inbox lists it."""

    pending_id: str
    kind: str = Field(description="approval or question")
    agent: str
    environment: str
    session_id: str
    tool: str | None = None
    summary: str = Field(description="The decision card's one-line summary (or the question)")
    rule: str | None = Field(default=None, description="The rule that asked, when one did")
    reason: str | None = None
    requested_at: str = Field(description="RFC 3339")
    age_seconds: int
    expires_at: str = Field(description="RFC 3339")
    escalation_step: int = Field(default=0, description="Escalation steps taken so far")
    approvals_needed: int = Field(default=1, description="Approvals the item's policy needs")
    votes: list[InboxVote] = Field(default_factory=list)


class InboxPage(_Wire):
    """``GET /inbox``: the tenant's pending items, oldest request first."""

    tenant: str
    items: list[InboxItem]
    next: str | None = Field(default=None, description="The cursor of the next page, if any")


class HistoryEntry(_Wire):
    """One entry of the audit log: who decided what, when, through which channel."""

    id: str
    at: str = Field(description="RFC 3339")
    kind: str = Field(description="human, expiry, refusal (or escalation)")
    decision: str
    actor: str
    channel: str | None = None
    agent: str | None = None
    tool: str | None = None
    pending_id: str | None = None
    session_id: str
    reason: str = Field(default="", description="The reason, the note, the changes made")
    refused: bool = Field(description="A refused attempt to decide, not a decision")


class HistoryPage(_Wire):
    """``GET /inbox/audit.json``: the tenant's audit entries, newest first."""

    tenant: str
    entries: list[HistoryEntry]
    next: str | None = Field(default=None, description="The cursor of the next page, if any")


# The CSV export's columns: HistoryEntry's fields, in this order.
CSV_COLUMNS: Final = tuple(HistoryEntry.model_fields)


@dataclass(frozen=True, kw_only=True)
class AuditFilter:
    """Which entries a history view shows: ``since <= at < until`` and the fields given."""

    since: float
    until: float
    agent: str | None = None
    tool: str | None = None
    decision: str | None = None
    actor: str | None = None
    channel: str | None = None

    def keeps(self, entry: "AuditEntry") -> bool:
        """Whether ``entry`` passes every field filter (the time range is the query's)."""
        wanted = (
            (self.agent, entry.agent),
            (self.tool, entry.tool),
            (self.decision, entry.decision),
            (self.actor, entry.actor),
            (self.channel, entry.channel),
        )
        return all(want is None or want == have for want, have in wanted)


def _when(epoch: float) -> str:
    return iso(datetime.fromtimestamp(epoch, UTC))


def _rule(item: "PendingItem") -> str | None:
    """The rule that asked: the item's policy names it; before policies, its reason did."""
    policy = getattr(item, "policy", None)
    named = getattr(policy, "rule", None)
    if named:
        return str(named)
    found = _RULE.match(item.reason or "")
    return found.group(1) if found else None


def inbox_row(item: "PendingItem", now: float) -> InboxItem:
    """The inbox's row of one pending item at ``now``."""
    policy = getattr(item, "policy", None)
    votes = [
        InboxVote(
            person=str(getattr(vote, "person", vote.actor)),
            actor=vote.actor,
            channel=vote.channel,
            at=_when(vote.at),
            decision=str(vote.decision),
        )
        for vote in getattr(item, "votes", None) or []
    ]
    summary = item.summary or (
        readable_args(item.tool, item.args) if item.tool else item.question or ""
    )
    return InboxItem(
        pending_id=item.id,
        kind=item.kind,
        agent=item.agent,
        environment=item.environment,
        session_id=item.session_id,
        tool=item.tool,
        summary=summary,
        rule=_rule(item),
        reason=item.reason,
        requested_at=_when(item.requested_at),
        age_seconds=max(0, int(now - item.requested_at)),
        expires_at=_when(item.expires_at),
        escalation_step=int(getattr(item, "escalation_step", 0) or 0),
        approvals_needed=int(getattr(policy, "approvals", 1) or 1),
        votes=votes,
    )


def history_row(entry: "AuditEntry") -> HistoryEntry:
    """The history's row of one audit entry."""
    return HistoryEntry(
        id=entry.id,
        at=_when(entry.at),
        kind=entry.kind,
        decision=entry.decision,
        actor=entry.actor,
        channel=entry.channel,
        agent=entry.agent,
        tool=entry.tool,
        pending_id=entry.pending_id,
        session_id=entry.subject,
        reason=entry.reason,
        refused=entry.kind == "refusal",
    )


# --- cursors ---------------------------------------------------------------------------------


def _cursor(at: float, record_id: str) -> str:
    """An opaque cursor: where the next page starts (the last row's time and id)."""
    return base64.urlsafe_b64encode(json.dumps([at, record_id]).encode()).decode().rstrip("=")


def parse_cursor(cursor: str | None) -> tuple[float, str] | None:
    """The (time, id) a cursor names; None for none.

    Raises:
        BadInput: not a cursor this module made (400).
    """
    if not cursor:
        return None
    try:
        at, record_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if isinstance(at, bool) or not isinstance(at, int | float):
            raise TypeError(at)
        if not isinstance(record_id, str):
            raise TypeError(record_id)
    except (ValueError, TypeError) as exc:
        raise BadInput("cursor: not a cursor of this list") from exc
    return float(at), record_id


def _page_size(limit: int) -> int:
    if not 1 <= limit <= MAX_PAGE:
        raise BadInput(f"limit: must be 1 to {MAX_PAGE}")
    return limit


# --- the lists -------------------------------------------------------------------------------


def pending_rows(items: "InboxPending", tenant: str, now: float) -> list[InboxItem]:
    """Every item waiting for the tenant's approvers at ``now``, oldest request first."""
    return [inbox_row(item, now) for item in items.of_tenant(tenant, now)]


def inbox_page(
    items: "InboxPending", tenant: str, now: float, *, limit: int = 50, cursor: str | None = None
) -> InboxPage:
    """One page of the tenant's pending items, and the cursor of the next.

    Raises:
        BadInput: a limit out of range or a cursor this module did not make.
    """
    size = _page_size(limit)
    found = list(islice(items.of_tenant(tenant, now, after=parse_cursor(cursor)), size + 1))
    shown = found[:size]
    more = len(found) > size and shown
    return InboxPage(
        tenant=tenant,
        items=[inbox_row(item, now) for item in shown],
        next=_cursor(shown[-1].requested_at, shown[-1].id) if more else None,
    )


def _entries(
    audit: "Audit", tenant: str, filters: AuditFilter, before: tuple[float, str] | None = None
) -> "Iterator[AuditEntry]":
    found = audit.of_tenant(tenant, since=filters.since, until=filters.until, before=before)
    return (entry for entry in found if filters.keeps(entry))


def history(audit: "Audit", tenant: str, filters: AuditFilter) -> list[HistoryEntry]:
    """Every entry of the tenant the filters keep, newest first (the exports' rows)."""
    return [history_row(entry) for entry in _entries(audit, tenant, filters)]


def history_page(
    audit: "Audit",
    tenant: str,
    filters: AuditFilter,
    *,
    limit: int = 100,
    cursor: str | None = None,
) -> HistoryPage:
    """One page of the tenant's history, and the cursor of the next.

    Raises:
        BadInput: a limit out of range or a cursor this module did not make.
    """
    size = _page_size(limit)
    found = list(islice(_entries(audit, tenant, filters, parse_cursor(cursor)), size + 1))
    shown = found[:size]
    more = len(found) > size and shown
    return HistoryPage(
        tenant=tenant,
        entries=[history_row(entry) for entry in shown],
        next=_cursor(shown[-1].at, shown[-1].id) if more else None,
    )


# --- exports and times -----------------------------------------------------------------------


def csv_cell(value: Any) -> str:
    """One CSV cell's text; one a spreadsheet would run as a formula gets a ``'`` first."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def history_csv(rows: "Iterable[HistoryEntry]") -> str:
    """The rows as CSV: a header row of ``CSV_COLUMNS``, then one row per entry (RFC 4180)."""
    import csv  # only the export writes CSV: not on the resolve function's import path

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        values = row.model_dump()
        writer.writerow([csv_cell(values[column]) for column in CSV_COLUMNS])
    return out.getvalue()


def parse_duration(text: str) -> float | None:
    """Seconds in ``7d`` / ``12h`` / ``30m`` / ``45s`` / ``2w``; None for another form."""
    duration = _DURATION.match(text.strip())
    return None if duration is None else int(duration.group(1)) * _UNITS[duration.group(2)]


def parse_moment(text: str | None, now: float, *, field: str) -> float | None:
    """Epoch seconds from ``7d`` / ``12h`` / ``30m`` (that long before ``now``), an ISO
    date or time (UTC when it names no zone), or epoch seconds; None for none.

    Raises:
        BadInput: none of those.
    """
    if text is None or text == "":
        return None
    duration = parse_duration(text)
    if duration is not None:
        return now - duration
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise BadInput(
            f"{field}: must be a duration (7d, 12h, 30m), an ISO time or epoch seconds"
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def audit_filter(
    now: float,
    *,
    since: str | None = None,
    until: str | None = None,
    agent: str | None = None,
    tool: str | None = None,
    decision: str | None = None,
    actor: str | None = None,
    channel: str | None = None,
) -> AuditFilter:
    """The filter a view's parameters ask for; ``since`` defaults to the last 7 days.

    Raises:
        BadInput: a time none of ``parse_moment``'s forms, or ``since`` after ``until``.
    """
    start = parse_moment(since, now, field="since")
    end = parse_moment(until, now, field="until")
    start = now - DEFAULT_HISTORY_DAYS * 86400 if start is None else start
    # "until" is exclusive: a moment after now takes everything up to now
    end = now + 1 if end is None else end
    if start > end:
        raise BadInput("since: is after until")
    return AuditFilter(
        since=start,
        until=end,
        agent=agent or None,
        tool=tool or None,
        decision=decision or None,
        actor=actor or None,
        channel=channel or None,
    )
