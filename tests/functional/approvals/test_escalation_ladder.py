"""Escalation ladders climbed by the sweeper, on each store adapter.

Given an item whose approval policy has an escalation ladder, when sweeps run as
its steps fall due, then each step notifies its channels once (under its own
subject and idempotency keys, also when two sweeps run at once or after downtime),
the messages sent before are redrawn to say so, the escalated channels may decide
it, and the final ``then`` decides it once through the decision path (audited as
``escalation``) and resumes the turn: denied with a reason, or approved and the
tool run once.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

import pytest

from signoff.approvals.escalation import escalation_of
from signoff.channels.memory import RecordingChannel, RecordingChat
from signoff.channels.notification import idempotency_key, notification_key
from signoff.channels.subject import Subject
from signoff.durable.decide import not_sent_to
from signoff.durable.sweeper import Sweeper
from signoff.errors import AlreadyResolved
from signoff.keys.tokens import signer_from
from signoff.models.scripted import ScriptedModel
from signoff.notify import lifecycle
from signoff.notify.compose import Composer, card_of
from signoff.notify.hub import Notifier
from signoff.queue.memory import MemoryQueue
from signoff.secrets.memory import MemorySecrets
from signoff.tools import tool
from signoff.web.card_html import approval_card
from tests.support.actors import person
from tests.support.agents import answer, calls, make_agent, playing
from tests.support.durable import StaticAgents, Store, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.clock import ManualClock
    from signoff.durable.turns import Turns
    from signoff.messages import ModelRequest, ModelResponse
    from signoff.store.pending_records import PendingItem

MINUTE, HOUR = 60.0, 3600.0
LADDER = [
    {"after": "30m", "notify": "leads"},
    {"after": "2h", "notify": ["oncall"]},
    {"after": "8h", "then": "deny"},
]
NOTIFY = {"slack": ["approval", "question"]}


def refund_rules(ladder: list[dict[str, Any]] | None = None) -> str:
    escalate = "" if ladder is None else f"    escalate: {ladder}\n"
    return (
        "default_decision: allow\nrules:\n"
        "  - name: refunds\n    scope: '*'\n    tool: refund\n    decision: ask\n" + escalate
    )


class Refunds:
    """A refund tool that counts its runs."""

    def __init__(self) -> None:
        self.runs: list[float] = []

        @tool
        def refund(amount: float) -> str:
            """Refund ``amount``."""
            self.runs.append(amount)
            return f"refunded {amount}"

        self.tool = refund


def agent_with(
    refunds: Refunds, *, rules: str, model: ScriptedModel, **config: Any
) -> StaticAgents:
    agent: Agent = make_agent(refunds.tool, rules=rules, name="refunder")
    changed = agent.config.model_validate(
        {**agent.config.model_dump(by_alias=True), "notify": NOTIFY, **config}
    )
    agent = type(agent)(**{**agent.__dict__, "config": changed})
    return StaticAgents({agent.name: (agent, model)})


@pytest.fixture
def queue() -> MemoryQueue:
    return MemoryQueue()


@pytest.fixture
def refunds() -> Refunds:
    return Refunds()


def paused_refund(
    store: Store,
    clock: ManualClock,
    queue: MemoryQueue,
    refunds: Refunds,
    *,
    rules: str | None = None,
    escalate: list[dict[str, Any]] | None = None,
) -> tuple[Turns, PendingItem]:
    model = playing(calls(("refund", {"amount": 40})), answer("all done"))
    extra = {"escalate": LADDER if escalate is None else escalate}
    agents = agent_with(refunds, rules=rules or refund_rules(), model=model, **extra)
    turns = turns_over(store, queue, agents, clock)
    paused = turns.send("refunder", "refund order 1", tenant="acme", environment="production")
    assert paused.pending is not None and paused.pending.policy is not None
    return turns, paused.pending


def sweeper(store: Store, clock: ManualClock, queue: MemoryQueue, turns: Turns) -> Sweeper:
    return Sweeper(
        turns=turns,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=queue,
        clock=clock,
    )


def notifier(store: Store, clock: ManualClock, **channels: RecordingChannel) -> Notifier:
    signer = signer_from(MemorySecrets({"resume-signing": "k" * 32}))
    composer = Composer(signer=signer, public_url="https://api.example.com")
    return Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels=channels,
        composer=lambda: composer,
        clock=clock,
    )


def deliver_all(hub: Notifier, queue: MemoryQueue) -> list[str]:
    delivered = [message["pendingId"] for message in queue.receive(100)]
    for subject in delivered:
        hub.deliver(subject)
    return delivered


class Channels:
    def __init__(self) -> None:
        self.slack = RecordingChat("slack")
        self.leads = RecordingChat("leads")
        self.oncall = RecordingChannel("oncall")

    def hub(self, store: Store, clock: ManualClock) -> Notifier:
        return notifier(store, clock, slack=self.slack, leads=self.leads, oncall=self.oncall)


def test_an_item_climbs_its_ladder_one_message_per_step_and_is_denied_at_the_end(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    turns, item = paused_refund(store, clock, queue, refunds)
    sweep, channels = sweeper(store, clock, queue, turns), Channels()
    hub = channels.hub(store, clock)
    deliver_all(hub, queue)  # the approval itself, to slack

    clock.advance(30 * MINUTE - 1)
    assert sweep.sweep().escalated == [], "not before the first step's time"
    clock.advance(1)
    first = sweep.sweep()
    again = sweep.sweep()
    deliver_all(hub, queue)

    step1 = str(Subject.escalate(item.id, 1))
    assert first.escalated == [step1] and again.escalated == []
    assert channels.leads.keys() == [f"{item.run_id}:{step1}:leads"]
    card = channels.leads.sent[0].notification
    assert (card.kind, card.pending_id, card.escalation_step, card.escalated_to) == (
        "approval",
        item.id,
        1,
        ["leads"],
    )
    assert card.approve_url is not None, "the escalated channel gets the deciding card"
    # the first channel's message was redrawn to say so, once, through its receipt
    assert [(receipt, n.escalation_step) for receipt, n in channels.slack.refreshed] == [
        ({"delivery": "1"}, 1)
    ]
    # one sentence, as the docs and the pages say it; a message drawn once names the time
    redrawn = channels.slack.refreshed[0][1].card_rows() or ""
    assert re.search(r"^Escalated to leads at \S+ \S+ UTC \(step 1 of 3\)$", redrawn, re.M)

    clock.advance(90 * MINUTE)
    second = sweep.sweep()
    deliver_all(hub, queue)
    step2 = str(Subject.escalate(item.id, 2))
    assert second.escalated == [step2]
    assert channels.oncall.keys() == [f"{item.run_id}:{step2}:oncall"]
    # the first channel and step 1's chat message both say step 2 now
    assert [n.escalation_step for _, n in channels.slack.refreshed] == [1, 2]
    assert [n.escalation_step for _, n in channels.leads.refreshed] == [2]

    clock.advance(6 * HOUR)
    last = sweep.sweep()

    assert last.escalated == [f"{item.id}:denied"] and last.resumed == [item.id]
    decided = store.pending.get(item.id)
    assert decided is not None
    assert (decided.status, decided.resolved_by, decided.resolved_via) == (
        "denied",
        "sweeper",
        "escalation",
    )
    assert decided.note == "nobody decided within 8 hours; the escalation policy denies it"
    assert refunds.runs == []
    session = store.sessions.load(item.session_id)
    assert session is not None and session.status == "done"
    entries = [e for e in store.audit.for_subject(item.session_id) if e.kind == "escalation"]
    assert [(e.decision, e.actor, e.channel, e.pending_id) for e in entries] == [
        ("denied", "sweeper", "escalation", item.id)
    ]
    # each channel got exactly one message per step, nothing after the end
    assert sweep.sweep().escalated == []
    deliver_all(hub, queue)
    assert (len(channels.slack.sent), len(channels.leads.sent), len(channels.oncall.sent)) == (
        1,
        1,
        1,
    )


def test_the_model_reads_why_the_escalation_denied_its_call(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    seen: list[ModelRequest] = []
    script = [calls(("refund", {"amount": 40})), answer("it was denied")]

    def respond(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        return script.pop(0)

    agents = agent_with(
        refunds, rules=refund_rules(), model=ScriptedModel(respond), escalate=LADDER
    )
    turns = turns_over(store, queue, agents, clock)
    paused = turns.send("refunder", "refund order 1", tenant="acme", environment="production")
    assert paused.pending is not None
    clock.advance(8 * HOUR)

    result = sweeper(store, clock, queue, turns).sweep()
    # the turn finished as denied; the next message's request carries the call's result
    turns.send(
        "refunder",
        "why not?",
        tenant="acme",
        environment="production",
        session_id=paused.pending.session_id,
    )

    assert result.resumed == [paused.pending.id]
    said = str(seen[-1].messages)
    assert "Denied by sweeper (nobody decided within 8 hours; the escalation policy denies it)" in (
        said
    )


def test_two_sweeps_at_once_take_each_step_once(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    turns, item = paused_refund(store, clock, queue, refunds)
    channels = Channels()
    deliver_all(channels.hub(store, clock), queue)
    clock.advance(30 * MINUTE)
    start = threading.Barrier(6)
    reports: list[list[str]] = []

    def sweep_once() -> None:
        start.wait()
        reports.append(sweeper(store, clock, queue, turns).sweep().escalated)

    threads = [threading.Thread(target=sweep_once) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    deliver_all(channels.hub(store, clock), queue)

    assert sorted(s for report in reports for s in report) == [str(Subject.escalate(item.id, 1))]
    assert store.pending.get(item.id).escalation_step == 1  # type: ignore[union-attr]
    assert len(channels.leads.sent) == 1 and channels.oncall.sent == []


def test_a_sweep_that_died_between_the_writes_is_finished_by_the_next(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    turns, item = paused_refund(store, clock, queue, refunds)
    channels = Channels()
    deliver_all(channels.hub(store, clock), queue)
    clock.advance(30 * MINUTE)
    now = clock.now().timestamp()
    # the dead sweep wrote the step's rows, and neither counted nor enqueued it
    store.outbox.add(
        lifecycle.escalation_rows(item, 1, ["leads"], now=now, retain_until=now + HOUR)
    )

    report = sweeper(store, clock, queue, turns).sweep()
    deliver_all(channels.hub(store, clock), queue)

    assert report.escalated == [str(Subject.escalate(item.id, 1))]
    assert store.pending.get(item.id).escalation_step == 1  # type: ignore[union-attr]
    assert len(channels.leads.sent) == 1


def test_steps_overdue_after_downtime_are_taken_in_order_in_one_sweep(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    turns, item = paused_refund(store, clock, queue, refunds)
    channels = Channels()
    deliver_all(channels.hub(store, clock), queue)

    clock.advance(3 * HOUR)  # the sweeper was down: steps 1 and 2 are both due
    report = sweeper(store, clock, queue, turns).sweep()
    deliver_all(channels.hub(store, clock), queue)

    assert report.escalated == [
        str(Subject.escalate(item.id, 1)),
        str(Subject.escalate(item.id, 2)),
    ]
    assert (len(channels.leads.sent), len(channels.oncall.sent)) == (1, 1)
    waiting = store.pending.get(item.id)
    assert waiting is not None and (waiting.status, waiting.escalation_step) == ("pending", 2)

    clock.advance(10 * HOUR)  # down again, past the end
    assert sweeper(store, clock, queue, turns).sweep().escalated == [f"{item.id}:denied"]


def test_a_rules_ladder_ending_in_approve_runs_the_tool_once(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    ladder = [{"after": "1h", "notify": "leads"}, {"after": "4h", "then": "approve"}]
    turns, item = paused_refund(
        store, clock, queue, refunds, rules=refund_rules(ladder), escalate=[]
    )
    assert item.policy is not None and item.policy.rule == "refunds"

    clock.advance(4 * HOUR)
    first = sweeper(store, clock, queue, turns).sweep()
    second = sweeper(store, clock, queue, turns).sweep()

    assert first.escalated == [str(Subject.escalate(item.id, 1)), f"{item.id}:approved"]
    assert second.escalated == []
    assert refunds.runs == [40]
    decided = store.pending.get(item.id)
    assert decided is not None and (decided.status, decided.resolved_via) == (
        "approved",
        "escalation",
    )
    session = store.sessions.load(item.session_id)
    assert session is not None and (session.status, session.text) == ("done", "all done")


def test_a_question_climbs_the_agents_ladder_and_ends_unanswered(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    model = playing(calls(("ask_user", {"question": "Which order?"})), answer("gave up"))
    agents = agent_with(refunds, rules=refund_rules(), model=model, escalate=LADDER)
    turns = turns_over(store, queue, agents, clock)
    paused = turns.send("refunder", "refund", tenant="acme", environment="production")
    item = paused.pending
    assert item is not None and item.kind == "question"
    channels = Channels()
    deliver_all(channels.hub(store, clock), queue)

    clock.advance(30 * MINUTE)
    sweeper(store, clock, queue, turns).sweep()
    deliver_all(channels.hub(store, clock), queue)
    asked = channels.leads.sent[0].notification
    assert (asked.kind, asked.question, asked.escalation_step) == ("question", "Which order?", 1)

    clock.advance(8 * HOUR)
    report = sweeper(store, clock, queue, turns).sweep()

    assert report.escalated[-1] == f"{item.id}:denied" and report.resumed == [item.id]
    session = store.sessions.load(item.session_id)
    assert session is not None and session.status == "done"
    results = [
        event
        for chunk in store.sessions.read_log(item.session_id)
        for event in chunk.events
        if event.get("type") == "tool:result"
    ]
    assert "Not answered (nobody decided within 8 hours" in str(results[-1])


def test_a_click_racing_the_final_step_one_wins(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    turns, item = paused_refund(store, clock, queue, refunds)
    clock.advance(3 * HOUR)
    sweeper(store, clock, queue, turns).sweep()  # steps 1 and 2
    clock.advance(5 * HOUR)  # the final step is due
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def click() -> None:
        start.wait()
        try:
            turns.resolve(item.id, decision="approve", actor=person("alice", "leads"))
            outcomes.append("click")
        except AlreadyResolved:
            outcomes.append("click lost")

    def sweep() -> None:
        start.wait()
        report = sweeper(store, clock, queue, turns).sweep()
        outcomes.append("sweep" if report.escalated else "sweep lost")

    threads = [threading.Thread(target=click), threading.Thread(target=sweep)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) in (["click", "sweep lost"], ["click lost", "sweep"])
    decided = store.pending.get(item.id)
    assert decided is not None
    won_by_click = "click" in outcomes
    assert decided.status == ("approved" if won_by_click else "denied")
    assert refunds.runs == ([40] if won_by_click else [])
    resolutions = [
        e for e in store.audit.for_subject(item.session_id) if e.kind in ("human", "escalation")
    ]
    assert len(resolutions) == 1


def test_an_escalated_channel_decides_only_once_its_step_was_taken(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    turns, item = paused_refund(store, clock, queue, refunds)
    agent = turns.catalog.get(item.agent)

    def refusal(channel: str) -> str | None:
        current = store.pending.get(item.id)
        assert current is not None
        return not_sent_to(current, channel, agent=agent, outbox=store.outbox)

    assert refusal("slack") is None
    assert refusal("leads") == "leads is not notified of this agent's approvals"
    clock.advance(30 * MINUTE)
    sweeper(store, clock, queue, turns).sweep()

    assert refusal("leads") is None
    assert refusal("oncall") == "oncall is not notified of this agent's approvals"
    turns.resolve(item.id, decision="approve", actor=person("lead", "leads"))
    assert refunds.runs == [40]


def test_the_card_says_where_the_item_stands(
    store: Store, clock: ManualClock, queue: MemoryQueue, refunds: Refunds
) -> None:
    turns, item = paused_refund(store, clock, queue, refunds)
    assert escalation_of(item) is None
    clock.advance(30 * MINUTE)
    sweeper(store, clock, queue, turns).sweep()
    clock.advance(2 * MINUTE)
    now = clock.now().timestamp()

    current = store.pending.get(item.id)
    assert current is not None
    escalation = escalation_of(current)
    assert escalation is not None
    assert escalation.line(now) == "Escalated to leads 2 minutes ago (step 1 of 3)"
    assert "\nEscalated to leads 2 minutes ago (step 1 of 3)\n" in card_of(current).text(now)
    page = approval_card(card_of(current), now=now, expires_text="", session_id="s")
    assert "<dt>Escalated</dt><dd>to leads 2 minutes ago (step 1 of 3)</dd>" in page


def test_an_escalation_steps_keys_are_its_own() -> None:
    channel_key = idempotency_key("r1", str(Subject.escalate("p1", 2)), "leads")

    assert channel_key == "r1:escalate:p1:2:leads"
    assert notification_key(channel_key, run_id="r1", channel="leads") == "r1:escalate:p1:2"
    assert notification_key("r1:p1:leads", run_id="r1", channel="leads") == "r1:p1"
    # a step's rows are composed from its item; a reminder's carry their notification
    assert Subject.parse(str(Subject.escalate("p:1", 3))).composed_from == "p:1"
    assert Subject.parse("stuck:p1:1").composed_from is None
