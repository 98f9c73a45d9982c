"""The approvals inbox's rows (``signoff.approvals.inbox``): pending items, history, filters, CSV.

On the memory store: what the inbox lists for a tenant (age, rule, votes, escalation),
its history filtered by every field and paged by cursor, and the CSV export — one
header row, one row per entry, RFC 4180 quoting, and no cell a spreadsheet would run.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest

from signoff.approvals.inbox import (
    CSV_COLUMNS,
    audit_filter,
    csv_cell,
    history,
    history_csv,
    history_page,
    inbox_page,
    parse_moment,
)
from signoff.clock import ManualClock
from signoff.errors import BadInput
from signoff.store.memory import MemoryStore
from signoff.store.records import AuditEntry
from signoff.store.session_records import Commit, SessionRecord
from tests.support.builders import T0, pending_approval

NOW = T0 + 600


def store_with(*items: object) -> MemoryStore:
    store = MemoryStore(clock=ManualClock(datetime.fromtimestamp(NOW, UTC)), page_size=2)
    for item in items:
        session = SessionRecord(
            session_id=item.session_id,  # type: ignore[attr-defined]
            agent="refunds",
            tenant=item.tenant,  # type: ignore[attr-defined]
            environment="production",
        )
        store.sessions.claim(session, purpose="message", owner="o", until=NOW + 60, now=NOW)
        paused = session.model_copy(update={"status": "paused"})
        store.sessions.commit(Commit(session=paused, pending=item, release=True), owner="o")  # type: ignore[arg-type]
    return store


def entry(entry_id: str, at: float, **changes: object) -> AuditEntry:
    base = AuditEntry(
        id=entry_id,
        subject="s1",
        at=at,
        kind="human",
        decision="approved",
        actor="alice@example.com",
        channel="inbox",
        pending_id="p1",
        tool="refund",
        tenant="acme",
        agent="refunds",
    )
    return base.model_copy(update=changes)


def test_a_pending_row_has_its_age_summary_and_the_rule_named_by_its_reason() -> None:
    item = pending_approval(
        "p1", reason="matched rule 'large-refunds'", summary="Refund 25 EUR on A-17"
    )
    store = store_with(item, pending_approval("p2", session_id="s2", tenant="globex"))

    page = inbox_page(store.pending, "acme", NOW)

    assert [row.pending_id for row in page.items] == ["p1"]
    row = page.items[0]
    assert (row.age_seconds, row.summary, row.rule, row.tool) == (
        600,
        "Refund 25 EUR on A-17",
        "large-refunds",
        "refund",
    )
    assert (row.escalation_step, row.approvals_needed, row.votes) == (0, 1, [])
    assert page.model_dump(by_alias=True)["items"][0]["ageSeconds"] == 600


def test_pending_pages_follow_their_cursor_to_the_end() -> None:
    items = [pending_approval(f"p{n}", session_id=f"s{n}", requested_at=T0 + n) for n in range(5)]
    store = store_with(*items)

    first = inbox_page(store.pending, "acme", NOW, limit=2)
    second = inbox_page(store.pending, "acme", NOW, limit=2, cursor=first.next)
    third = inbox_page(store.pending, "acme", NOW, limit=2, cursor=second.next)

    assert [[r.pending_id for r in p.items] for p in (first, second, third)] == [
        ["p0", "p1"],
        ["p2", "p3"],
        ["p4"],
    ]
    assert third.next is None


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("agent", "billing", ["e5"]),
        ("tool", "wire", ["e4"]),
        ("decision", "denied", ["e3"]),
        ("actor", "bob", ["e2"]),
        ("channel", "slack", ["e2"]),
    ],
)
def test_each_filter_keeps_only_its_entries(field: str, value: str, expected: list[str]) -> None:
    store = store_with()
    store.audit.record(
        [
            entry("e1", T0 + 1),
            entry("e2", T0 + 2, actor="bob", channel="slack"),
            entry("e3", T0 + 3, decision="denied"),
            entry("e4", T0 + 4, tool="wire"),
            entry("e5", T0 + 5, agent="billing"),
        ]
    )

    rows = history(store.audit, "acme", audit_filter(NOW, since="1h", **{field: value}))

    assert [row.id for row in rows] == expected


def test_since_and_until_bound_the_history_and_refusals_are_marked() -> None:
    store = store_with()
    store.audit.record(
        [
            entry("old", NOW - 8 * 86400),
            entry("refused", NOW - 3600, kind="refusal", decision="refused"),
            entry("recent", NOW - 60),
        ]
    )

    default = history(store.audit, "acme", audit_filter(NOW))
    bounded = history(store.audit, "acme", audit_filter(NOW, since="9d", until="30m"))

    assert [(row.id, row.refused) for row in default] == [("recent", False), ("refused", True)]
    assert [row.id for row in bounded] == ["refused", "old"]


def test_history_pages_follow_their_cursor_newest_first() -> None:
    store = store_with()
    store.audit.record([entry(f"e{n}", T0 + n) for n in range(5)])
    filters = audit_filter(NOW, since="1h")

    first = history_page(store.audit, "acme", filters, limit=3)
    second = history_page(store.audit, "acme", filters, limit=3, cursor=first.next)

    assert [row.id for row in first.entries] == ["e4", "e3", "e2"]
    assert [row.id for row in second.entries] == ["e1", "e0"]
    assert second.next is None


@pytest.mark.parametrize("cursor", ["x", "bm90IGpzb24", "WzEsIDJd", "WyJhIiwgImIiXQ"])
def test_a_cursor_this_module_did_not_make_is_a_bad_request(cursor: str) -> None:
    with pytest.raises(BadInput):
        history_page(store_with().audit, "acme", audit_filter(NOW), cursor=cursor)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('=HYPERLINK("http://evil")', '\'=HYPERLINK("http://evil")'),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tcmd", "'\tcmd"),
        ("plain, with comma", "plain, with comma"),
        (None, ""),
        (True, "true"),
    ],
)
def test_a_cell_a_spreadsheet_would_run_gets_a_quote_first(text: object, expected: str) -> None:
    assert csv_cell(text) == expected


def test_the_csv_has_a_header_row_one_row_per_entry_and_quotes_as_rfc_4180() -> None:
    store = store_with()
    tricky = 'denied, "too large"\nsee =SUM(A1)'
    store.audit.record(
        [
            entry("e1", T0 + 1, reason=tricky, decision="denied"),
            entry("e2", T0 + 2, actor="=cmd|' /C calc'!A0", kind="refusal", decision="refused"),
        ]
    )
    rows = history(store.audit, "acme", audit_filter(NOW, since="1h"))

    text = history_csv(rows)

    assert text.startswith(",".join(CSV_COLUMNS) + "\r\n")
    assert '"denied, ""too large""\nsee =SUM(A1)"' in text
    parsed = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [row["id"] for row in parsed] == ["e2", "e1"]
    assert parsed[0]["actor"] == "'=cmd|' /C calc'!A0" and parsed[0]["refused"] == "true"
    assert parsed[1]["reason"] == tricky


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", NOW - 7 * 86400),
        ("12h", NOW - 12 * 3600),
        ("30m", NOW - 1800),
        ("2026-01-01T00:00:00Z", T0),
        ("2026-01-01", T0),
        (str(T0), T0),
    ],
)
def test_times_are_durations_iso_times_or_epoch_seconds(text: str, expected: float) -> None:
    assert parse_moment(text, NOW, field="since") == expected


def test_a_time_of_no_known_form_or_a_range_backwards_is_a_bad_request() -> None:
    with pytest.raises(BadInput, match="since"):
        parse_moment("last week", NOW, field="since")
    with pytest.raises(BadInput, match="after until"):
        audit_filter(NOW, since="1h", until="2h")
