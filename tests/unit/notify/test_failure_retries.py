"""Permanent failures on the in-memory store: retried by the sweeper on a slow
schedule with the same key, then failed for good (issue 12, failures a person can act on)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from signoff.channels.memory import RecordingChannel, fail_times
from signoff.clock import ManualClock
from signoff.keys.tokens import signer_from
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier, RetrySchedule
from signoff.queue.memory import MemoryQueue
from signoff.secrets.memory import MemorySecrets
from signoff.store.memory import MemoryStore
from tests.unit.notify.test_notifier import CHANNELS, pause, sweeper

if TYPE_CHECKING:
    from signoff.store.pending_records import OutboxRow


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(clock: ManualClock) -> MemoryStore:
    return MemoryStore(clock=clock)


@pytest.fixture
def composer() -> Composer:
    signer = signer_from(MemorySecrets({"resume-signing": "k" * 32}))
    return Composer(signer=signer, public_url="https://api.example.com")


def hub(store: MemoryStore, clock: ManualClock, composer: Composer, **kw: Any) -> Notifier:
    return Notifier(
        pending=store.pending,
        outbox=store.outbox,
        composer=lambda: composer,
        clock=clock,
        lock_ttl=30,
        **kw,
    )


def row_of(store: MemoryStore, subject: str, channel: str) -> OutboxRow:
    return next(r for r in store.outbox.rows(subject) if r.channel == channel)


def test_a_permanent_failure_is_sent_again_by_the_sweeper_with_the_same_key(
    store: MemoryStore, clock: ManualClock, composer: Composer
) -> None:
    # given a webhook refusing twice (a 401: its secret is being fixed), then accepting
    item = pause(store, clock)
    webhook = RecordingChannel(
        "webhook", fail_with=fail_times(2, retryable=False, reason="401 Unauthorized")
    )
    channels = {name: RecordingChannel(name) for name in CHANNELS} | {"webhook": webhook}
    notifier = hub(store, clock, composer, channels=channels)
    queue = MemoryQueue()

    report = notifier.deliver(item.id)
    assert report.failed == {"webhook": "401 Unauthorized"}

    # nothing before the first delay (5 minutes)
    clock.advance(299)
    sweeper(store, clock, queue).sweep()
    assert queue.receive() == []
    assert notifier.deliver(item.id).sent == []

    # then the sweeper makes it sendable and enqueues its subject; the send fails again
    clock.advance(1)
    sweeper(store, clock, queue).sweep()
    assert queue.receive() == [{"pendingId": item.id, "sessionId": item.session_id}]
    assert notifier.deliver(item.id).failed == {"webhook": "401 Unauthorized"}
    assert row_of(store, item.id, "webhook").failures == 2

    # the second retry waits 30 minutes, and then delivers
    clock.advance(1799)
    sweeper(store, clock, queue).sweep()
    assert queue.receive() == []
    clock.advance(1)
    sweeper(store, clock, queue).sweep()
    assert [m["pendingId"] for m in queue.receive()] == [item.id]
    assert notifier.deliver(item.id).sent == ["webhook"]

    # every attempt carried the one key; the other channels were sent once
    assert {a.key for a in webhook.attempts} == {f"{item.run_id}:{item.id}:webhook"}
    assert len(webhook.attempts) == 3 and len(webhook.sent) == 1
    assert all(len(channels[name].sent) == 1 for name in ("email", "slack"))
    row = row_of(store, item.id, "webhook")
    assert row.notified_at is not None and not row.failed


def test_after_the_last_retry_the_row_is_failed_for_good_with_its_reason(
    store: MemoryStore, clock: ManualClock, composer: Composer
) -> None:
    item = pause(store, clock)
    webhook = RecordingChannel(
        "webhook", fail_with=fail_times(99, retryable=False, reason="404 Not Found")
    )
    channels = {name: RecordingChannel(name) for name in CHANNELS} | {"webhook": webhook}
    told: list[tuple[int, float | None]] = []
    notifier = hub(
        store,
        clock,
        composer,
        channels=channels,
        retries=RetrySchedule((10.0, 20.0)),
        on_permanent_failure=lambda row, failure: told.append((row.failures, row.retry_at)),
    )
    queue = MemoryQueue()
    start = clock.now().timestamp()

    notifier.deliver(item.id)
    for wait in (10, 20):
        clock.advance(wait)
        assert sweeper(store, clock, queue).sweep().retried == [f"{item.id}/webhook"]
        notifier.deliver(item.id)

    # two extra attempts, then given up: told each time, the last one for good
    assert told == [(1, start + 10), (2, start + 30), (3, None)]
    row = row_of(store, item.id, "webhook")
    assert row.failed and row.retry_at is None and row.last_error == "404 Not Found"
    assert store.outbox.failed() == [row]
    clock.advance(100_000)
    assert sweeper(store, clock, queue).sweep().retried == []
    notifier.deliver(item.id)
    assert len(webhook.attempts) == 3


def test_no_delays_fail_at_once_and_two_sweeps_retry_a_row_once(
    store: MemoryStore, clock: ManualClock, composer: Composer
) -> None:
    assert RetrySchedule(()).retry_at(1, 0.0) is None
    assert RetrySchedule().retry_at(3, 0.0) == 7200.0
    assert RetrySchedule().retry_at(4, 0.0) is None

    item = pause(store, clock)
    webhook = RecordingChannel("webhook", fail_with=fail_times(1, retryable=False))
    channels = {name: RecordingChannel(name) for name in CHANNELS} | {"webhook": webhook}
    hub(store, clock, composer, channels=channels).deliver(item.id)
    clock.advance(300)
    queue = MemoryQueue()
    first, second = (sweeper(store, clock, queue).sweep() for _ in range(2))
    assert first.retried == [f"{item.id}/webhook"] and second.retried == []
    assert len(queue.receive()) == 1
