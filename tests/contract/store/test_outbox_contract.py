"""Contract of the Outbox port: rows per channel, the unsent view, marking a send."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import pytest

from signoff.errors import NotFound
from signoff.store import base

if TYPE_CHECKING:
    from signoff.clock import ManualClock
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


def test_the_send_lock_keeps_concurrent_senders_apart(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"), outbox=[records.outbox("p1", "slack")])

    first = store.outbox.claim("p1", "slack", owner="a", until=t0 + 30, now=t0)
    assert first is not None and first.lock_owner == "a" and first.attempts == 1
    # another invocation while a's lock is live gets nothing
    assert store.outbox.claim("p1", "slack", owner="b", until=t0 + 30, now=t0 + 1) is None
    # a's lock ran out: b takes over and the attempt is counted
    second = store.outbox.claim("p1", "slack", owner="b", until=t0 + 60, now=t0 + 31)
    assert second is not None and second.lock_owner == "b" and second.attempts == 2
    # a's late release changes nothing: the lock is b's
    store.outbox.release("p1", "slack", owner="a", error="timeout")
    assert store.outbox.rows("p1")[0].lock_owner == "b"


def test_a_transient_failure_releases_the_lock_with_its_error(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"), outbox=[records.outbox("p1", "webhook")])
    assert store.outbox.claim("p1", "webhook", owner="a", until=t0 + 30, now=t0)

    store.outbox.release("p1", "webhook", owner="a", error="503 from the receiver")

    row = store.outbox.rows("p1")[0]
    assert (row.lock_owner, row.last_error, row.notified_at) == (
        None,
        "503 from the receiver",
        None,
    )
    assert [r.channel for r in store.outbox.unsent(created_before=t0 + 100)] == ["webhook"]
    again = store.outbox.claim("p1", "webhook", owner="b", until=t0 + 30, now=t0 + 1)
    assert again is not None and again.attempts == 2


def test_a_release_keeps_the_receipt_of_what_went_out_for_the_retry(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"), outbox=[records.outbox("p1", "mail")])
    assert store.outbox.claim("p1", "mail", owner="a", until=t0 + 30, now=t0)

    # one recipient of two was mailed before the failure
    store.outbox.release(
        "p1", "mail", owner="a", error="throttled", receipt={"messageId:b@example.com": "m-1"}
    )

    again = store.outbox.claim("p1", "mail", owner="b", until=t0 + 30, now=t0 + 1)
    assert again is not None and again.notified_at is None
    assert again.receipt == {"messageId:b@example.com": "m-1"}
    store.outbox.release("p1", "mail", owner="b", error="throttled again")
    assert store.outbox.rows("p1")[0].receipt == {"messageId:b@example.com": "m-1"}


def test_sent_rows_keep_their_receipt_and_cannot_be_claimed(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"), outbox=[records.outbox("p1", "slack")])
    assert store.outbox.claim("p1", "slack", owner="a", until=t0 + 30, now=t0)

    store.outbox.mark_sent("p1", "slack", at=t0 + 2, receipt={"ts": "1700.42", "channel": "C1"})

    row = store.outbox.rows("p1")[0]
    assert row.notified_at == t0 + 2 and row.receipt == {"ts": "1700.42", "channel": "C1"}
    assert row.lock_owner is None
    assert store.outbox.claim("p1", "slack", owner="b", until=t0 + 30, now=t0 + 3) is None


def test_a_receipt_recorded_under_the_lock_is_handed_to_the_next_claim(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"), outbox=[records.outbox("p1", "slack")])
    assert store.outbox.claim("p1", "slack", owner="a", until=t0 + 30, now=t0)

    # the post went out; its receipt is written on its own, before notifiedAt
    assert store.outbox.record_receipt("p1", "slack", {"ts": "1700.42", "channel": "C1"}, owner="a")

    row = store.outbox.rows("p1")[0]
    assert (row.receipt, row.notified_at, row.lock_owner) == (
        {"ts": "1700.42", "channel": "C1"},
        None,
        "a",
    )
    # a crashes before mark_sent; once its lock runs out the next sender is handed the receipt
    again = store.outbox.claim("p1", "slack", owner="b", until=t0 + 90, now=t0 + 31)
    assert again is not None and again.receipt == {"ts": "1700.42", "channel": "C1"}


def test_only_the_lock_holder_records_a_receipt(store: Store, records: Records, t0: float) -> None:
    records.pause(store, records.pending("p1"), outbox=[records.outbox("p1", "slack")])
    assert store.outbox.claim("p1", "slack", owner="a", until=t0 + 30, now=t0)
    assert store.outbox.claim("p1", "slack", owner="b", until=t0 + 90, now=t0 + 31)

    # a's lock lapsed and b holds the row: a's late write changes nothing
    assert not store.outbox.record_receipt("p1", "slack", {"ts": "1.1"}, owner="a")
    assert store.outbox.record_receipt("p1", "slack", {"ts": "2.2"}, owner="b")
    store.outbox.mark_sent("p1", "slack", at=t0 + 32, receipt={"ts": "2.2"})
    # a sent row is settled: nobody writes its receipt any more
    assert not store.outbox.record_receipt("p1", "slack", {"ts": "3.3"}, owner="b")
    assert not store.outbox.record_receipt("p9", "slack", {"ts": "3.3"}, owner="b")
    assert store.outbox.rows("p1")[0].receipt == {"ts": "2.2"}


def test_a_permanent_failure_is_recorded_and_never_retried(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"), outbox=[records.outbox("p1", "email")])
    assert store.outbox.claim("p1", "email", owner="a", until=t0 + 30, now=t0)

    store.outbox.mark_failed("p1", "email", reason="MessageRejected: address suppressed")

    row = store.outbox.rows("p1")[0]
    assert row.failed and row.last_error == "MessageRejected: address suppressed"
    assert row.notified_at is None
    assert store.outbox.unsent(created_before=t0 + 100) == []
    assert store.outbox.claim("p1", "email", owner="b", until=t0 + 30, now=t0 + 60) is None


def test_claiming_an_unknown_row_is_not_found(store: Store, t0: float) -> None:
    with pytest.raises(NotFound):
        store.outbox.claim("nope", "slack", owner="a", until=t0 + 30, now=t0)


# --- rows outside a turn's commit: lifecycle and stuck notifications ------------------------

NOTE = {"kind": "stuck", "agent": "refunds", "runId": "run-1", "title": "Still waiting", "body": ""}


def test_add_writes_new_rows_that_carry_their_notification(
    store: Store, records: Records, t0: float
) -> None:
    rows = [
        records.outbox("stuck:p1:1", channel, kind="stuck", notification=NOTE)
        for channel in ("slack", "email")
    ]

    assert store.outbox.add(rows) is True

    listed = store.outbox.rows("stuck:p1:1")
    assert listed == sorted(rows, key=lambda row: row.channel)
    assert listed[0].notification == NOTE
    assert listed[0].idempotency_key == "run-1:stuck:p1:1:email"
    unsent = store.outbox.unsent(created_before=t0 + 1)
    assert [(row.pending_id, row.channel) for row in unsent] == [
        ("stuck:p1:1", "email"),
        ("stuck:p1:1", "slack"),
    ]


def test_add_of_a_subject_written_before_writes_nothing(
    store: Store, records: Records, t0: float
) -> None:
    first = [records.outbox("stuck:p1:1", "slack", kind="stuck", notification=NOTE)]
    assert store.outbox.add(first)
    store.outbox.mark_sent("stuck:p1:1", "slack", at=t0 + 1)

    # a second sweep writes the same reminder, with one more channel
    again = [
        records.outbox("stuck:p1:1", channel, kind="stuck", notification=NOTE, created_at=t0 + 2)
        for channel in ("email", "slack")
    ]

    assert store.outbox.add(again) is False
    listed = store.outbox.rows("stuck:p1:1")
    assert [(row.channel, row.notified_at) for row in listed] == [("slack", t0 + 1)]


def test_added_rows_are_sent_like_a_pause_s_rows(store: Store, records: Records, t0: float) -> None:
    store.outbox.add([records.outbox("run:r1:run_finish", "webhook", notification=NOTE)])

    claimed = store.outbox.claim("run:r1:run_finish", "webhook", owner="a", until=t0 + 30, now=t0)
    assert claimed is not None and claimed.notification == NOTE
    store.outbox.mark_sent("run:r1:run_finish", "webhook", at=t0 + 1)

    assert store.outbox.unsent(created_before=t0 + 100) == []
    assert store.outbox.rows("run:r1:run_finish")[0].notified_at == t0 + 1


def test_a_row_past_its_retention_is_gone_and_its_subject_free_again(
    store: Store, records: Records, t0: float, clock: ManualClock
) -> None:
    row = records.outbox("run:r1:run_start", "slack", notification=NOTE, retain_until=t0 + 100)
    assert store.outbox.add([row])

    clock.advance(100)

    assert store.outbox.rows("run:r1:run_start") == []
    assert store.outbox.unsent(created_before=t0 + 1000) == []
    assert store.outbox.add([row]) is True


def test_a_committed_lifecycle_row_reads_back_with_its_notification(
    store: Store, records: Records
) -> None:
    # the pause commit's transaction writes whatever rows the turn hands it
    start = records.outbox("run:run-1:run_start", "webhook", kind="info", notification=NOTE)
    records.pause(store, records.pending("p1"), outbox=[start, records.outbox("p1", "webhook")])

    assert store.outbox.rows("run:run-1:run_start") == [start]
    assert store.outbox.rows("p1")[0].notification is None


# --- permanent failures: the slow retry and an operator's re-drive -------------------------


def test_a_failure_with_a_retry_waits_for_it_then_is_made_sendable_once(
    store: Store, records: Records, t0: float
) -> None:
    records.pause(store, records.pending("p1"), outbox=[records.outbox("p1", "webhook")])
    assert store.outbox.claim("p1", "webhook", owner="a", until=t0 + 30, now=t0)

    store.outbox.mark_failed("p1", "webhook", reason="401 Unauthorized", retry_at=t0 + 300)

    row = store.outbox.rows("p1")[0]
    assert (row.failed, row.failures, row.retry_at, row.lock_owner) == (True, 1, t0 + 300, None)
    # waiting for its retry: neither claimable, nor unsent, nor failed for good
    assert store.outbox.claim("p1", "webhook", owner="b", until=t0 + 90, now=t0 + 60) is None
    assert store.outbox.unsent(created_before=t0 + 1000) == []
    assert store.outbox.failed() == []
    assert store.outbox.retries_due(t0 + 299) == []
    assert not store.outbox.redrive("p1", "webhook", now=t0 + 299, due_only=True)
    assert [r.channel for r in store.outbox.retries_due(t0 + 300)] == ["webhook"]

    # due: one of two sweeps makes it sendable again, its failure count kept
    assert store.outbox.redrive("p1", "webhook", now=t0 + 300, due_only=True)
    assert not store.outbox.redrive("p1", "webhook", now=t0 + 301, due_only=True)
    row = store.outbox.rows("p1")[0]
    assert (row.failed, row.failures, row.retry_at) == (False, 1, None)
    assert store.outbox.retries_due(t0 + 1000) == []
    # back in the unsent view once the grace from the re-drive has passed
    assert store.outbox.unsent(created_before=t0 + 300) == []
    assert [r.channel for r in store.outbox.unsent(created_before=t0 + 361)] == ["webhook"]
    again = store.outbox.claim("p1", "webhook", owner="b", until=t0 + 330, now=t0 + 300)
    assert again is not None and again.attempts == 2
    assert again.idempotency_key == "run-1:p1:webhook"


def test_a_failure_without_a_retry_is_listed_failed_and_only_a_redrive_revives_it(
    store: Store, records: Records, t0: float
) -> None:
    rows = [records.outbox("p1", "webhook"), records.outbox("p1", "slack")]
    records.pause(store, records.pending("p1"), outbox=rows)
    assert store.outbox.claim("p1", "webhook", owner="a", until=t0 + 30, now=t0)
    store.outbox.mark_failed("p1", "webhook", reason="first", retry_at=t0 + 10)
    assert store.outbox.redrive("p1", "webhook", now=t0 + 10, due_only=True)
    assert store.outbox.claim("p1", "webhook", owner="a", until=t0 + 40, now=t0 + 10)

    store.outbox.mark_failed("p1", "webhook", reason="404 Not Found")

    [failed] = store.outbox.failed()
    assert (failed.channel, failed.failures, failed.retry_at) == ("webhook", 2, None)
    assert failed.last_error == "404 Not Found"
    assert store.outbox.retries_due(t0 + 10_000) == []
    # the sweeper's move never revives it; an operator's does, once, with a fresh schedule
    assert not store.outbox.redrive("p1", "webhook", now=t0 + 10_000, due_only=True)
    assert store.outbox.redrive("p1", "webhook", now=t0 + 20, due_only=False)
    assert not store.outbox.redrive("p1", "webhook", now=t0 + 21, due_only=False)
    row = {r.channel: r for r in store.outbox.rows("p1")}["webhook"]
    assert (row.failed, row.failures, row.last_error) == (False, 0, "404 Not Found")
    assert store.outbox.failed() == []
    # a row that did not fail (unsent, or sent) is not re-driven
    assert not store.outbox.redrive("p1", "slack", now=t0 + 20, due_only=False)
    store.outbox.mark_sent("p1", "slack", at=t0 + 21)
    assert not store.outbox.redrive("p1", "slack", now=t0 + 22, due_only=False)
    assert not store.outbox.redrive("p9", "slack", now=t0 + 22, due_only=False)


@pytest.mark.parametrize(
    "port",
    [
        "OutboxRows",
        "OutboxWriter",
        "OutboxRedrive",
        "NotifierOutbox",
        "SweeperOutbox",
        "OperatorOutbox",
    ],
)
def test_the_adapter_is_each_narrow_port(store: Store, port: str) -> None:
    # every caller holds the adapter as its own narrow port: each method, as declared
    declared = getattr(base, port)
    for klass in declared.__mro__:
        for name, method in vars(klass).items():
            if not inspect.isfunction(method) or name.startswith("_"):
                continue
            wanted = inspect.signature(method).parameters
            given = inspect.signature(getattr(store.outbox, name)).parameters
            assert [(p.name, p.kind, p.default) for p in list(wanted.values())[1:]] == [
                (p.name, p.kind, p.default) for p in given.values()
            ], f"{port}.{name}"
