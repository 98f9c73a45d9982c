"""Lifecycle announcements, stuck reminders and re-driven turns, on each store adapter.

Given an agent whose ``notify`` asks for ``run_start`` / ``run_finish`` / ``stuck``,
when its turns run, pause, finish, wait or die, then the outbox holds one row per
channel and subject, committed with the turn (or by the sweeper), and the notifier
delivers each once, with the key ``<runId>:<subject>:<channel>`` on every attempt.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from signoff.agents import load_agent
from signoff.channels.memory import RecordingChannel, fail_times
from signoff.durable.sweeper import Sweeper
from signoff.engine import Engine
from signoff.errors import SendFailed
from signoff.keys.tokens import signer_from
from signoff.models.factory import build_model
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier
from signoff.queue.memory import MemoryQueue
from signoff.secrets.memory import MemorySecrets
from signoff.tools import ToolContext, tool
from tests.support.actors import person
from tests.support.agents import answer, calls, make_agent, playing
from tests.support.durable import StaticAgents, Store, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.agents import Agent
    from signoff.clock import ManualClock
    from signoff.durable.turns import Turns
    from signoff.models.base import ModelCall
    from signoff.store.pending_records import PendingItem

AGENTS = Path(__file__).resolve().parents[3] / "agents"
REFUND = "order A-1001 arrived broken, can you refund it?"
HOUR = 3600.0


class Crash(BaseException):
    """The process dying (not an Exception, so nothing on the way catches it)."""


@pytest.fixture
def queue() -> MemoryQueue:
    return MemoryQueue()


def configured(agent: Agent, **changes: Any) -> Agent:
    config = agent.config.model_copy(update=changes)
    return type(agent)(**{**agent.__dict__, "config": config})


def sample(name: str, **changes: Any) -> StaticAgents:
    agent = configured(load_agent(AGENTS / name), **changes)
    return StaticAgents({agent.name: (agent, build_model(agent.config.model, agent.directory))})


def notifier(store: Store, clock: ManualClock, **channels: RecordingChannel) -> Notifier:
    signer = signer_from(MemorySecrets({"resume-signing": "k" * 32}))
    composer = Composer(signer=signer, public_url="https://api.example.com")
    return Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels=channels,
        composer=lambda: composer,
        clock=clock,
        lock_ttl=30,
    )


def sweeper(store: Store, clock: ManualClock, queue: MemoryQueue, turns: Turns) -> Sweeper:
    return Sweeper(
        turns=turns,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=queue,
        clock=clock,
        grace=60,
    )


def subjects(queue: MemoryQueue) -> list[str]:
    return [message["pendingId"] for message in queue.receive(100)]


def deliver_all(hub: Notifier, queue: MemoryQueue) -> list[str]:
    """Deliver every queued subject, as the notifier function would, in order."""
    delivered = subjects(queue)
    for subject in delivered:
        hub.deliver(subject)
    return delivered


def kinds(channel: RecordingChannel) -> list[str]:
    return [sent.notification.kind for sent in channel.sent]


# --- run_start / run_finish ----------------------------------------------------------------


def test_a_run_is_announced_when_it_starts_and_when_it_finishes_once_per_channel(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    notify = {"webhook": ["approval", "run_start", "run_finish"], "slack": ["run_finish"]}
    turns = turns_over(store, queue, sample("customer-service", notify=notify), clock)

    # when a message starts a run that pauses for a refund approval
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    item = paused.pending
    assert item is not None
    run = item.run_id

    # then its start was committed with the turn and enqueued after it; no finish yet
    start = f"run:{run}:run_start"
    assert subjects(queue) == [start, item.id]
    (row,) = store.outbox.rows(start)
    assert (row.channel, row.kind, row.run_id) == ("webhook", "info", run)
    assert row.notification is not None and row.notification["trigger"] == "message"
    assert store.outbox.rows(f"run:{run}:run_finish") == []

    # when a human approves, the resumed run is announced and then its finish
    done = turns.resolve(item.id, decision="approve", actor=person("alice", "api"))
    resumed, finish = f"run:{run}:run_start:{item.id}", f"run:{run}:run_finish"
    assert subjects(queue) == [resumed, finish]

    webhook, slack = RecordingChannel("webhook"), RecordingChannel("slack")
    hub = notifier(store, clock, webhook=webhook, slack=slack)
    for subject in (start, item.id, resumed, finish):
        hub.deliver(subject)
        hub.deliver(subject)  # a redelivered queue message sends nothing twice

    assert webhook.keys() == [
        f"{run}:{start}:webhook",
        f"{run}:{item.id}:webhook",
        f"{run}:{resumed}:webhook",
        f"{run}:{finish}:webhook",
    ]
    assert kinds(webhook) == ["info", "approval", "info", "result"]
    assert slack.keys() == [f"{run}:{finish}:slack"]
    started, result = webhook.sent[2].notification, webhook.sent[3].notification
    assert started.title == "customer-service started (resolution)"
    assert (started.trigger, started.pending_id) == ("resolution", item.id)
    assert result.body == done.text and result.stop_reason is None
    assert result.session_id == paused.session_id and result.resume_token is None


def test_a_scheduled_run_announces_its_result_committed_with_the_finish(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    # a schedule sends the digest agent a message; nobody waits on the answer
    notify = {"webhook": ["run_start", "run_finish"]}
    turns = turns_over(store, queue, sample("daily-digest", notify=notify), clock)

    done = turns.send(
        "daily-digest", "Summarise today's orders.", tenant="default", environment="production"
    )

    assert done.status == "finished" and done.text is not None
    queued = subjects(queue)
    assert [subject.rsplit(":", 1)[-1] for subject in queued] == ["run_start", "run_finish"]
    webhook = RecordingChannel("webhook")
    hub = notifier(store, clock, webhook=webhook)
    for subject in queued:
        hub.deliver(subject)
    result = webhook.sent[-1].notification
    assert (result.kind, result.agent, result.title) == (
        "result",
        "daily-digest",
        "daily-digest finished",
    )
    assert result.body == done.text
    assert webhook.sent[0].notification.title == "daily-digest started (message)"


def test_a_denied_run_finishes_with_its_stop_reason(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    turns = turns_over(
        store, queue, sample("customer-service", notify={"slack": ["run_finish"]}), clock
    )
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None

    denied = turns.resolve(
        paused.pending.id, decision="deny", actor=person("bob", "api"), note="no"
    )

    (row,) = store.outbox.rows(f"run:{paused.pending.run_id}:run_finish")
    assert denied.stop_reason == "denied" and row.notification is not None
    assert row.notification["stopReason"] == "denied"
    assert row.notification["title"] == "customer-service stopped (denied)"
    assert row.notification["body"].endswith("Stop reason: denied")


def test_a_pause_announces_no_finish_and_an_unsubscribed_agent_nothing(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    turns = turns_over(
        store, queue, sample("customer-service", notify={"slack": ["run_finish"]}), clock
    )

    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")

    assert paused.status == "paused" and paused.pending is not None
    assert store.outbox.rows(f"run:{paused.pending.run_id}:run_finish") == []
    assert store.outbox.unsent(created_before=clock.now().timestamp() + 1) == []
    assert subjects(queue) == []  # slack wants no approvals and there was no finish


def test_a_lost_enqueue_of_an_announcement_is_resent_by_the_sweeper(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    class LostQueue:
        def send(self, body: dict[str, Any]) -> None:
            raise Crash

    agents = sample("daily-digest", notify={"webhook": ["run_finish"]})
    with pytest.raises(Crash):
        turns_over(store, LostQueue(), agents, clock).send(
            "daily-digest",
            "Summarise today's orders.",
            tenant="t",
            environment="e",
            session_id="s1",
        )
    session = store.sessions.load("s1")
    assert session is not None and session.status == "done", "the finish was committed"

    clock.advance(61)
    report = sweeper(store, clock, queue, turns_over(store, queue, agents, clock)).sweep()

    (subject,) = report.requeued
    assert subject.startswith("run:") and subject.endswith(":run_finish")
    assert queue.receive() == [{"pendingId": subject, "sessionId": "s1"}]


def test_a_transient_failure_retries_an_announcement_with_the_same_key(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    turns = turns_over(
        store, queue, sample("daily-digest", notify={"slack": ["run_finish"]}), clock
    )
    turns.send("daily-digest", "Summarise today's orders.", tenant="t", environment="e")
    (subject,) = subjects(queue)
    slack = RecordingChannel("slack", fail_with=fail_times(1))
    hub = notifier(store, clock, slack=slack)

    with pytest.raises(SendFailed):
        hub.deliver(subject)
    hub.deliver(subject)

    assert len(slack.sent) == 1 and len({attempt.key for attempt in slack.attempts}) == 1
    assert store.outbox.rows(subject)[0].notified_at is not None


# --- stuck reminders -----------------------------------------------------------------------


def waiting_refund(
    store: Store, clock: ManualClock, queue: MemoryQueue, **notify: list[str]
) -> tuple[Turns, PendingItem]:
    agents = sample("customer-service", remind_after=HOUR, notify=notify)
    turns = turns_over(store, queue, agents, clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    queue.receive(100)
    return turns, paused.pending


def test_a_waiting_item_is_reminded_once_per_interval(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    turns, item = waiting_refund(
        store, clock, queue, slack=["approval", "stuck"], email=["approval"]
    )
    sweep = sweeper(store, clock, queue, turns)

    clock.advance(HOUR - 1)
    assert sweep.sweep().reminded == [], "not before remindAfter"
    clock.advance(1)
    first = sweep.sweep()
    clock.advance(30 * 60)
    between = sweep.sweep()
    clock.advance(30 * 60)
    second = sweep.sweep()

    assert first.reminded == [f"stuck:{item.id}:1"] and between.reminded == []
    assert second.reminded == [f"stuck:{item.id}:2"]
    assert store.pending.get(item.id).reminders == 2  # type: ignore[union-attr]
    # only the channels that asked for stuck get a row
    assert [row.channel for row in store.outbox.rows(f"stuck:{item.id}:1")] == ["slack"]

    slack = RecordingChannel("slack")
    deliver_all(notifier(store, clock, slack=slack, email=RecordingChannel("email")), queue)
    # the approval itself was never delivered, so the sweeps re-enqueued it too: once
    assert slack.keys() == [
        f"{item.run_id}:{item.id}:slack",
        f"{item.run_id}:stuck:{item.id}:1:slack",
        f"{item.run_id}:stuck:{item.id}:2:slack",
    ]
    reminder = slack.sent[1].notification
    assert (reminder.kind, reminder.pending_id, reminder.tool) == ("stuck", item.id, "issue_refund")
    assert reminder.title == "Still waiting: issue_refund (customer-service)"
    assert "1h 0m" in reminder.body and reminder.resume_token is None


def test_a_resolved_item_gets_no_more_reminders(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    turns, item = waiting_refund(store, clock, queue, slack=["stuck"])
    turns.resolve(item.id, decision="approve", actor=person("alice", "api"))

    clock.advance(3 * HOUR)

    assert sweeper(store, clock, queue, turns).sweep().reminded == []


def test_an_agent_without_remind_after_or_stuck_is_never_reminded(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    agents = sample("customer-service", notify={"slack": ["approval", "stuck"]})
    turns = turns_over(store, queue, agents, clock)
    turns.send(
        "customer-service", REFUND, tenant="default", environment="production", session_id="a"
    )
    _, item = waiting_refund(store, clock, queue, slack=["approval"])

    clock.advance(5 * HOUR)

    assert sweeper(store, clock, queue, turns).sweep().reminded == []
    assert store.pending.get(item.id).reminders == 0  # type: ignore[union-attr]


def test_two_sweeps_at_once_send_one_reminder(
    store: Store, clock: ManualClock, queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns, item = waiting_refund(store, clock, queue, slack=["stuck"])
    clock.advance(HOUR)
    # the worst interleaving: every sweep has read the item (no reminder yet)
    # before any of them writes one
    read = threading.Barrier(4)
    real_due_in = store.pending.due_in

    def due_together(shard: int, now: float) -> Iterator[PendingItem]:
        # every sweep reads each shard in the same order: they meet at each one
        items = list(real_due_in(shard, now))
        read.wait()
        yield from items

    monkeypatch.setattr(store.pending, "due_in", due_together)
    reports: list[Any] = []

    def sweep() -> None:
        reports.append(sweeper(store, clock, queue, turns).sweep())

    threads = [threading.Thread(target=sweep) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(len(report.reminded) for report in reports) == [0, 0, 0, 1]
    slack = RecordingChannel("slack")
    deliver_all(notifier(store, clock, slack=slack), queue)
    assert slack.keys() == [f"{item.run_id}:stuck:{item.id}:1:slack"]
    assert store.pending.get(item.id).reminders == 1  # type: ignore[union-attr]


def test_a_sweep_that_died_after_writing_a_reminder_is_finished_without_a_second_one(
    store: Store, clock: ManualClock, queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns, item = waiting_refund(store, clock, queue, slack=["stuck"])
    clock.advance(HOUR)

    def crash(*args: Any, **kwargs: Any) -> None:
        raise Crash

    monkeypatch.setattr(store.pending, "note_reminder", crash)
    with pytest.raises(Crash):
        sweeper(store, clock, queue, turns).sweep()
    monkeypatch.undo()

    clock.advance(60)
    again = sweeper(store, clock, queue, turns).sweep()

    assert again.reminded == []
    assert store.pending.get(item.id).reminders == 1  # type: ignore[union-attr]
    assert [row.pending_id for row in store.outbox.unsent(created_before=1e12)] == [
        f"stuck:{item.id}:1"
    ]


# --- stalled turns -------------------------------------------------------------------------


def crashing_payer(effects: list[str], **config: Any) -> StaticAgents:
    @tool
    def charge(amount: int, ctx: ToolContext) -> str:
        """Charges a card."""
        effects.append(ctx.idempotency_key)
        if len(effects) == 1:
            raise Crash
        return "charged"

    agent = configured(make_agent(charge, name="payer"), **config)
    model: ModelCall = playing(calls(("charge", {"amount": 5})), answer("paid"))
    return StaticAgents({"payer": (agent, model)})


def test_a_turn_whose_process_died_is_redriven_by_the_sweeper_and_announced_once(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    effects: list[str] = []
    agents = crashing_payer(effects, notify={"slack": ["stuck", "run_finish"]})
    first = turns_over(store, queue, agents, clock, owner="process-1", lease_ttl=60)
    with pytest.raises(Crash):
        first.send("payer", "pay", tenant="t", environment="e", session_id="s-crash")
    crashed = store.sessions.load("s-crash")
    assert crashed is not None and crashed.status == "running" and crashed.state is not None
    run = crashed.state.run_id
    sweep = sweeper(store, clock, queue, turns_over(store, queue, agents, clock, owner="sweeper"))

    clock.advance(60)
    assert sweep.sweep().redriven == [], "the lease ran out, but the grace has not passed"
    clock.advance(60)
    report = sweep.sweep()

    assert report.redriven == ["s-crash"] and report.reminded == [f"stalled:s-crash:{run}"]
    done = store.sessions.load("s-crash")
    assert done is not None and (done.status, done.lease_owner) == ("done", None)
    assert len(effects) == 1, "an unsafe tool is reported interrupted, not run again"
    clock.advance(HOUR)
    later = sweep.sweep()
    assert (later.redriven, later.reminded) == ([], []), "nothing left to re-drive or announce"

    slack = RecordingChannel("slack")
    deliver_all(notifier(store, clock, slack=slack), queue)
    assert slack.keys() == [
        f"{run}:stalled:s-crash:{run}:slack",
        f"{run}:run:{run}:run_finish:slack",
    ]
    stalled = slack.sent[0].notification
    assert (stalled.kind, stalled.session_id) == ("stuck", "s-crash")


def test_two_sweeps_at_once_redrive_a_stalled_turn_once(
    store: Store, clock: ManualClock, queue: MemoryQueue
) -> None:
    effects: list[str] = []
    agents = crashing_payer(effects, notify={"slack": ["stuck"]})
    with pytest.raises(Crash):
        turns_over(store, queue, agents, clock, owner="p1", lease_ttl=60).send(
            "payer", "pay", tenant="t", environment="e", session_id="s1"
        )
    clock.advance(121)
    start = threading.Barrier(3)
    reports: list[Any] = []

    def sweep(n: int) -> None:
        turns = turns_over(store, queue, agents, clock, owner=f"sweeper-{n}")
        start.wait()
        reports.append(sweeper(store, clock, queue, turns).sweep())

    threads = [threading.Thread(target=sweep, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(len(report.redriven) for report in reports) == 1
    assert sum(len(report.reminded) for report in reports) == 1
    session = store.sessions.load("s1")
    assert session is not None and session.status == "done"


def test_a_live_turn_is_left_alone(store: Store, clock: ManualClock, queue: MemoryQueue) -> None:
    effects: list[str] = []
    agents = crashing_payer(effects, notify={"slack": ["stuck"]})
    with pytest.raises(Crash):
        turns_over(store, queue, agents, clock, owner="p1", lease_ttl=900).send(
            "payer", "pay", tenant="t", environment="e", session_id="s1"
        )

    clock.advance(600)
    report = sweeper(store, clock, queue, turns_over(store, queue, agents, clock)).sweep()

    assert report.redriven == [] and report.reminded == []
    assert store.sessions.load("s1").lease_owner == "p1"  # type: ignore[union-attr]


def test_a_resume_that_died_before_its_first_commit_is_redriven_as_the_resume(
    store: Store, clock: ManualClock, queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = sample("customer-service", notify={"slack": ["run_start", "run_finish"]})
    turns = turns_over(store, queue, agents, clock, owner="resolver", lease_ttl=60)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    run = paused.pending.run_id

    # the resolution is stored, then the process dies inside the resume
    def die(*args: Any, **kwargs: Any) -> None:
        raise Crash

    monkeypatch.setattr(Engine, "resume", die)
    with pytest.raises(Crash):
        turns.resolve(paused.pending.id, decision="approve", actor=person("alice", "api"))
    monkeypatch.undo()
    clock.advance(121)

    report = sweeper(store, clock, queue, turns_over(store, queue, agents, clock)).sweep()

    assert report.redriven == [paused.session_id]
    done = store.sessions.load(paused.session_id)
    assert done is not None and done.status == "done"
    assert done.text == "Refunded 42.0 USD for order A-1001 to the original payment method."
    assert store.pending.get(paused.pending.id).resumed  # type: ignore[union-attr]
    # announced as the resume it is, once
    assert len(store.outbox.rows(f"run:{run}:run_start:{paused.pending.id}")) == 1
    assert len(store.outbox.rows(f"run:{run}:run_finish")) == 1
