"""The notifier hub and the sweeper on the in-memory store, with recording channels."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from signoff.agents import load_agent
from signoff.channels.memory import RecordingChannel, RecordingMailbox, fail_times
from signoff.clock import ManualClock
from signoff.durable.sweeper import Sweeper
from signoff.errors import Expired, SendFailed
from signoff.keys.tokens import signer_from
from signoff.models.factory import build_model
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier
from signoff.queue.memory import MemoryQueue
from signoff.secrets.memory import MemorySecrets
from signoff.store.memory import MemoryStore
from tests.support.actors import person
from tests.support.durable import StaticAgents, turns_over

AGENTS = Path(__file__).resolve().parents[3] / "agents"
REFUND = "order A-1001 arrived broken, can you refund it?"
CHANNELS = ("email", "slack", "webhook")


class Crash(BaseException):
    """The process dying (not an Exception, so nothing on the way catches it)."""


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


def agents() -> StaticAgents:
    agent = load_agent(AGENTS / "customer-service")
    notify = {name: ["approval", "question"] for name in CHANNELS}
    agent = type(agent)(
        **{**agent.__dict__, "config": agent.config.model_copy(update={"notify": notify})}
    )
    return StaticAgents({agent.name: (agent, build_model(agent.config.model, agent.directory))})


def pause(store: MemoryStore, clock: ManualClock, queue: MemoryQueue | None = None) -> Any:
    turns = turns_over(store, queue or MemoryQueue(), agents(), clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    return paused.pending


def notifier(
    store: MemoryStore, clock: ManualClock, composer: Composer, **channels: RecordingChannel
) -> Notifier:
    return Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels=channels,
        composer=lambda: composer,
        clock=clock,
        lock_ttl=30,
    )


def test_every_channel_gets_the_notification_once_with_its_own_key(
    store: MemoryStore, clock: ManualClock, composer: Composer
) -> None:
    item = pause(store, clock)
    channels = {name: RecordingChannel(name) for name in CHANNELS}
    hub = notifier(store, clock, composer, **channels)

    report = hub.deliver(item.id)

    assert sorted(report.sent) == list(CHANNELS)
    for name, channel in channels.items():
        assert channel.keys() == [f"{item.run_id}:{item.id}:{name}"]
        sent = channel.sent[0].notification
        assert sent.kind == "approval" and sent.tool == "issue_refund"
        assert '"orderId": "A-1001"' in sent.body
    assert all(row.notified_at is not None for row in store.outbox.rows(item.id))
    again = hub.deliver(item.id)
    assert again.sent == [] and all(len(c.sent) == 1 for c in channels.values())


def test_slack_failing_twice_does_not_resend_the_others(
    store: MemoryStore, clock: ManualClock, composer: Composer
) -> None:
    item = pause(store, clock)
    channels = {name: RecordingChannel(name) for name in CHANNELS}
    channels["slack"] = RecordingChannel("slack", fail_with=fail_times(2, retry_after=5))
    hub = notifier(store, clock, composer, **channels)

    for _ in range(2):
        with pytest.raises(SendFailed) as failed:
            hub.deliver(item.id)
        assert failed.value.retryable and failed.value.retry_after == 5
    hub.deliver(item.id)

    assert len(channels["webhook"].sent) == 1 and len(channels["email"].sent) == 1
    assert len(channels["slack"].sent) == 1
    assert {a.key for a in channels["slack"].attempts} == {f"{item.run_id}:{item.id}:slack"}
    slack_row = next(r for r in store.outbox.rows(item.id) if r.channel == "slack")
    assert slack_row.attempts == 3 and slack_row.notified_at is not None


def test_a_permanent_failure_is_recorded_not_retried(
    store: MemoryStore, clock: ManualClock, composer: Composer
) -> None:
    item = pause(store, clock)
    email = RecordingChannel("email", fail_with=fail_times(99, retryable=False, reason="rejected"))
    failures: list[str] = []
    hub = Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels={
            "email": email,
            "slack": RecordingChannel("slack"),
            "webhook": RecordingChannel("webhook"),
        },
        composer=lambda: composer,
        clock=clock,
        on_permanent_failure=lambda row, failure: failures.append(row.channel),
    )
    report = hub.deliver(item.id)
    assert report.failed == {"email": "rejected"} and failures == ["email"]
    row = next(r for r in store.outbox.rows(item.id) if r.channel == "email")
    assert row.failed and row.last_error == "rejected"
    hub.deliver(item.id)
    assert len(email.attempts) == 1


def test_a_crash_after_sending_retries_with_the_same_key(
    store: MemoryStore, clock: ManualClock, composer: Composer, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = pause(store, clock)
    webhook = RecordingChannel("webhook")
    hub = notifier(
        store,
        clock,
        composer,
        webhook=webhook,
        email=RecordingChannel("email"),
        slack=RecordingChannel("slack"),
    )
    real_mark_sent = store.outbox.mark_sent

    def crash_for_webhook(pending_id: str, channel: str, **kwargs: Any) -> None:
        if channel == "webhook":
            raise Crash
        real_mark_sent(pending_id, channel, **kwargs)

    monkeypatch.setattr(store.outbox, "mark_sent", crash_for_webhook)
    with pytest.raises(Crash):
        hub.deliver(item.id)
    monkeypatch.setattr(store.outbox, "mark_sent", real_mark_sent)

    # a fresh invocation: the dead one's lock keeps it off the row until it expires
    retry = notifier(
        store,
        clock,
        composer,
        webhook=webhook,
        email=RecordingChannel("email"),
        slack=RecordingChannel("slack"),
    )
    assert retry.deliver(item.id).skipped == ["webhook"]
    clock.advance(31)
    retry.deliver(item.id)
    assert webhook.keys() == [f"{item.run_id}:{item.id}:webhook"] * 2


def test_links_are_signed_and_expire_with_the_item(
    store: MemoryStore, clock: ManualClock, composer: Composer
) -> None:
    item = pause(store, clock)
    note = composer.for_item(item)
    assert note.link_url is not None and note.link_url.startswith("https://api.example.com/a/")
    token = composer.signer.verify(note.resume_token or "", clock.now().timestamp())
    assert token.pending_id == item.id and token.expires_at == int(item.expires_at)
    assert (
        note.approve_url
        == f"https://api.example.com/approvals/{item.id}/approve?token={note.resume_token}"
    )
    assert note.wire()["kind"] == "approval" and note.wire()["runId"] == item.run_id


def sweeper(store: MemoryStore, clock: ManualClock, queue: MemoryQueue) -> Sweeper:
    return Sweeper(
        turns=turns_over(store, queue, agents(), clock),
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=queue,
        clock=clock,
        grace=60,
    )


class LostQueue:
    def send(self, body: dict[str, Any]) -> None:
        raise Crash


def test_each_recipient_gets_a_link_of_their_own_and_a_retry_sends_only_the_rest(
    store: MemoryStore, clock: ManualClock, composer: Composer
) -> None:
    item = pause(store, clock)
    addresses = ["ana@example.com", "bo@example.com", "cy@example.com"]
    # the second letter of the first attempt fails
    attempts = iter([None, SendFailed("x", "throttled", retryable=True)])
    email = RecordingMailbox("email", addresses, fail_with=lambda n, k: next(attempts, None))
    hub = notifier(
        store,
        clock,
        composer,
        email=email,
        slack=RecordingChannel("slack"),
        webhook=RecordingChannel("webhook"),
    )

    with pytest.raises(SendFailed):
        hub.deliver(item.id)
    hub.deliver(item.id)

    key = f"{item.run_id}:{item.id}:email"
    assert email.keys() == [
        f"{key}:{a}" for a in ("ana@example.com", "bo@example.com", "cy@example.com")
    ]
    signer = composer.signer
    granted = {
        sent.key.rsplit(":", 1)[1]: signer.verify(sent.notification.resume_token or "", 0)
        for sent in email.sent
    }
    assert {a: (t.recipient, t.channel) for a, t in granted.items()} == {
        a: (a, "email") for a in addresses
    }
    row = next(r for r in store.outbox.rows(item.id) if r.channel == "email")
    assert row.notified_at is not None and len(row.receipt) == 3


def test_a_lost_enqueue_is_resent_within_one_sweep(store: MemoryStore, clock: ManualClock) -> None:
    turns = turns_over(store, LostQueue(), agents(), clock)
    with pytest.raises(Crash):
        turns.send(
            "customer-service", REFUND, tenant="default", environment="production", session_id="s1"
        )
    queue = MemoryQueue()
    assert sweeper(store, clock, queue).sweep().requeued == [], "not before the grace period"
    clock.advance(61)
    report = sweeper(store, clock, queue).sweep()
    pending_id = store.sessions.load("s1").pending_id  # type: ignore[union-attr]
    assert report.requeued == [pending_id]
    assert queue.receive() == [{"pendingId": pending_id, "sessionId": "s1"}]


def test_an_expired_item_ends_its_turn_denied_and_a_late_click_gets_410(
    store: MemoryStore, clock: ManualClock
) -> None:
    item = pause(store, clock)
    queue = MemoryQueue()
    clock.advance(86400 + 1)
    report = sweeper(store, clock, queue).sweep()
    assert report.expired == [item.id] and report.resumed == [item.id]
    assert store.pending.get(item.id).status == "expired"  # type: ignore[union-attr]
    session = store.sessions.load(item.session_id)
    assert session is not None and session.status == "done" and session.stop_reason == "denied"
    events = [
        e
        for c in store.sessions.read_log(item.session_id, from_seq=session.first_seq)
        for e in c.events
    ]
    refused = [e for e in events if e["type"] == "tool:result" and e["tool"] == "issue_refund"]
    assert refused[-1]["statusText"] == "Denied." and "expired" in refused[-1]["detailText"]
    assert [a.kind for a in store.audit.for_subject(item.session_id)][-1] == "expiry"
    with pytest.raises(Expired):
        turns_over(store, queue, agents(), clock).resolve(
            item.id, decision="approve", actor=person("late", "email")
        )


def test_two_sweeps_at_once_expire_and_resume_once(store: MemoryStore, clock: ManualClock) -> None:
    item = pause(store, clock)
    clock.advance(86400 + 1)
    queue = MemoryQueue()
    start = threading.Barrier(2)
    reports: list[Any] = []

    def sweep() -> None:
        start.wait()
        reports.append(sweeper(store, clock, queue).sweep())

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(len(r.expired) for r in reports) == [0, 1]
    assert sum(len(r.resumed) for r in reports) == 1
    assert store.pending.get(item.id).status == "expired"  # type: ignore[union-attr]
