"""Contract of the Outbox port: rows per channel, the unsent view, marking a send."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from signoff.errors import NotFound

if TYPE_CHECKING:
    from tests.contract.conftest import Records, Store


def test_rows_are_listed_by_channel_name_with_stable_idempotency_keys(
    store: Store, records: Records
) -> None:
    rows = [records.outbox("p1", channel) for channel in ("webhook", "email", "slack")]
    records.pause(store, records.pending("p1"), outbox=rows)

    listed = store.outbox.rows("p1")

    assert [row.channel for row in listed] == ["email", "slack", "webhook"]
    assert listed[0].idempotency_key == "run-1:p1:email"
    assert store.outbox.rows("p2") == []


def test_unsent_lists_rows_created_before_a_time_oldest_first(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(
        store,
        records.pending("p1"),
        outbox=[
            records.outbox("p1", "slack", created_at=t0 + 3),
            records.outbox("p1", "webhook", created_at=t0 + 2),
        ],
    )
    records.pause(
        store,
        records.pending("p2", session_id="s2"),
        outbox=[records.outbox("p2", "email", created_at=t0 + 1)],
    )

    def unsent(before: float, limit: int = 100) -> list[tuple[str, str]]:
        rows = store.outbox.unsent(created_before=before, limit=limit)
        return [(row.pending_id, row.channel) for row in rows]

    assert unsent(t0 + 10) == [("p2", "email"), ("p1", "webhook"), ("p1", "slack")]
    assert unsent(t0 + 10, limit=2) == [("p2", "email"), ("p1", "webhook")]
    # strictly before: a row created at the cut-off is left for the next sweep
    assert unsent(t0 + 2) == [("p2", "email")]


def test_a_sent_row_records_when_and_leaves_the_unsent_view(
    store: Store, records: Records, t0: float
) -> None:
    rows = [records.outbox("p1", "email"), records.outbox("p1", "slack")]
    records.pause(store, records.pending("p1"), outbox=rows)

    store.outbox.mark_sent("p1", "slack", at=t0 + 7)

    notified = {row.channel: row.notified_at for row in store.outbox.rows("p1")}
    assert notified == {"email": None, "slack": t0 + 7}
    assert [row.channel for row in store.outbox.unsent(created_before=t0 + 10)] == ["email"]


def test_a_row_failed_for_good_is_not_unsent(store: Store, records: Records, t0: float) -> None:
    rows = [records.outbox("p1", "email", failed=True, last_error="550 no such user")]
    records.pause(store, records.pending("p1"), outbox=rows)

    assert store.outbox.unsent(created_before=t0 + 10) == []
    assert store.outbox.rows("p1") == rows


def test_marking_an_unknown_row_sent_is_not_found(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"), outbox=[records.outbox("p1", "email")])

    with pytest.raises(NotFound) as missing:
        store.outbox.mark_sent("p1", "slack", at=t0)

    assert (missing.value.kind, missing.value.key) == ("outbox row", "p1/slack")
    assert store.outbox.rows("p1")[0].notified_at is None
