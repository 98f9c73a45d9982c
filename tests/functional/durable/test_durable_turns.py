"""Durable turns on each store adapter (in-memory, DynamoDB on moto): pause,
resolve once, resume from the log."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from signoff.agents import load_agent
from signoff.approver.actors import chat_user
from signoff.clock import ManualClock
from signoff.durable.decide import Approve
from signoff.errors import AlreadyResolved, Expired, SessionBusy, SignoffError, UsageError
from signoff.messages import ToolResultMessage
from signoff.models.factory import build_model
from signoff.queue.memory import MemoryQueue
from signoff.store.memory import MemoryStore
from signoff.tools import ToolContext, tool
from tests.support.actors import person
from tests.support.agents import answer, calls, make_agent, playing
from tests.support.durable import StaticAgents, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store

AGENTS = Path(__file__).resolve().parents[3] / "agents"
REFUND = "order A-1001 arrived broken, can you refund it?"


def customer_service(notify: dict[str, list[str]] | None = None) -> StaticAgents:
    agent = load_agent(AGENTS / "customer-service")
    if notify is not None:
        config = agent.config.model_copy(update={"notify": notify})
        agent = type(agent)(**{**agent.__dict__, "config": config})
    return StaticAgents({agent.name: (agent, build_model(agent.config.model, agent.directory))})


def refunds_issued(agents: StaticAgents) -> dict[str, Any]:
    """The refunds of this load of the sample shop, keyed by idempotency key."""
    function = agents.get("customer-service").tools["issue_refund"].function
    refunds: dict[str, Any] = function.__globals__["REFUNDS"]
    return refunds


def test_ask_pauses_durably_and_approve_resumes_to_the_end(
    store: MemoryStore, clock: ManualClock
) -> None:
    queue = MemoryQueue()
    agents = customer_service({"webhook": ["approval"], "email": ["approval"]})
    turns = turns_over(store, queue, agents, clock)
    before = len(refunds_issued(agents))
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.status == "paused"
    item = paused.pending
    assert item is not None and item.kind == "approval" and item.tool == "issue_refund"
    assert item.args == {"orderId": "A-1001", "amount": 42.0}
    assert item.expires_at == clock.now().timestamp() + 86400
    assert [row.channel for row in store.outbox.rows(item.id)] == ["email", "webhook"]
    assert all(row.notified_at is None for row in store.outbox.rows(item.id))
    assert queue.receive() == [{"pendingId": item.id, "sessionId": paused.session_id}]
    session = store.sessions.load(paused.session_id)
    assert session is not None and session.status == "paused" and session.lease_owner is None
    assert len(refunds_issued(agents)) == before

    done = turns.resolve(item.id, decision="approve", actor=person("alice", "email"))
    assert done.status == "finished" and done.stop_reason is None
    assert done.text == "Refunded 42.0 USD for order A-1001 to the original payment method."
    assert len(refunds_issued(agents)) == before + 1
    kinds = [e["type"] for e in done.events]
    assert kinds[0] == "budget:check" and kinds[-1] == "loop:done"
    assert kinds.index("approval:pending") < kinds.index(
        "tool:started", kinds.index("approval:pending")
    )
    refund = [e for e in done.events if e["type"] == "tool:result" and e["tool"] == "issue_refund"]
    assert [e["statusText"] for e in refund] == ["Approved."]
    assert store.sessions.load(paused.session_id).status == "done"  # type: ignore[union-attr]
    assert store.pending.get(item.id).resumed  # type: ignore[union-attr]
    audit = store.audit.for_subject(paused.session_id)
    assert [(a.kind, a.decision) for a in audit if a.tool == "issue_refund"] == [
        ("rule", "ask"),
        ("human", "approved"),
    ]
    assert audit[-1].actor == "alice" and audit[-1].channel == "email"


def test_deny_ends_the_turn_denied(store: MemoryStore, clock: ManualClock) -> None:
    turns = turns_over(store, MemoryQueue(), customer_service(), clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    done = turns.resolve(
        paused.pending.id, decision="deny", actor=person("bob", "api"), note="not eligible"
    )
    assert done.status == "finished" and done.stop_reason == "denied"
    assert [e["type"] for e in done.events][-1] == "loop:denied"
    result = [e for e in done.events if e["type"] == "tool:result"][-1]
    assert result["statusText"] == "Denied." and "not eligible" in result["detailText"]


def test_question_is_answered_and_the_answer_is_the_tool_result(
    store: MemoryStore, clock: ManualClock
) -> None:
    turns = turns_over(store, MemoryQueue(), customer_service(), clock)
    paused = turns.send(
        "customer-service", "I want my money back", tenant="default", environment="staging"
    )
    assert paused.pending is not None and paused.pending.kind == "question"
    assert paused.pending.options == ["A-1001", "A-1002"]
    with pytest.raises(UsageError):
        turns.resolve(paused.pending.id, decision="approve", actor=person("x", "api"))
    done = turns.resolve(paused.pending.id, answer="A-1002", actor=person("carol", "api"))
    assert done.text == "Refunded 58.5 USD for order A-1002."


def test_second_resolution_gets_the_winner_state(store: MemoryStore, clock: ManualClock) -> None:
    turns = turns_over(store, MemoryQueue(), customer_service(), clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    turns.resolve(paused.pending.id, decision="approve", actor=person("alice", "slack"))
    with pytest.raises(AlreadyResolved) as caught:
        turns.resolve(paused.pending.id, decision="deny", actor=person("bob", "email"))
    assert caught.value.current.status == "approved"
    assert caught.value.current.resolved_by == "alice"


def test_an_expired_item_cannot_be_resolved(store: MemoryStore, clock: ManualClock) -> None:
    turns = turns_over(store, MemoryQueue(), customer_service(), clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    clock.advance(86400 + 1)
    with pytest.raises(Expired):
        turns.resolve(paused.pending.id, decision="approve", actor=person("alice", "api"))


def test_a_message_to_a_paused_session_is_busy(store: MemoryStore, clock: ManualClock) -> None:
    turns = turns_over(store, MemoryQueue(), customer_service(), clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    with pytest.raises(SessionBusy) as caught:
        turns.send(
            "customer-service",
            "hello?",
            tenant="default",
            environment="production",
            session_id=paused.session_id,
        )
    assert caught.value.status == "paused"
    assert caught.value.pending_id == paused.pending.id  # type: ignore[union-attr]


class FailingQueue:
    def send(self, body: dict[str, Any]) -> None:
        raise SignoffError("queue down")


def test_enqueue_failure_after_commit_loses_nothing(store: MemoryStore, clock: ManualClock) -> None:
    turns = turns_over(store, FailingQueue(), customer_service({"webhook": ["approval"]}), clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.status == "paused" and paused.pending is not None
    assert store.pending.get(paused.pending.id).status == "pending"  # type: ignore[union-attr]
    rows = store.outbox.rows(paused.pending.id)
    assert [(r.channel, r.notified_at) for r in rows] == [("webhook", None)]
    assert [
        r.pending_id for r in store.outbox.unsent(created_before=clock.now().timestamp() + 1)
    ] == [paused.pending.id]


def test_the_log_is_append_only_and_rebuilds_the_conversation(
    store: MemoryStore, clock: ManualClock
) -> None:
    turns = turns_over(store, MemoryQueue(), customer_service(), clock)
    done = turns.send("customer-service", REFUND, tenant="default", environment="staging")
    chunks = list(store.sessions.read_log(done.session_id))
    assert [c.seq for c in chunks] == list(range(chunks[0].seq, chunks[0].seq + len(chunks)))
    messages = [m for c in chunks for m in c.messages]
    assert messages[0].content == REFUND  # type: ignore[union-attr]
    assert sum(isinstance(m, ToolResultMessage) for m in messages) == 2
    assert [e for c in chunks for e in c.events] == done.events
    again = turns.send(
        "customer-service",
        "thanks",
        tenant="default",
        environment="staging",
        session_id=done.session_id,
    )
    later = list(store.sessions.read_log(done.session_id))
    assert later[: len(chunks)] == chunks, "earlier chunks are never rewritten"
    assert again.events[0]["type"] == "budget:check"


def test_deadline_continues_and_ends_the_same(store: MemoryStore, clock: ManualClock) -> None:
    @tool
    def slow(i: int) -> int:
        """Ten seconds of work."""
        clock.advance(10)
        return i

    def agents() -> StaticAgents:
        model = playing(calls(("slow", {"i": 1})), calls(("slow", {"i": 2})), answer("all done"))
        return StaticAgents({"slowpoke": (make_agent(slow, name="slowpoke"), model)})

    other_clock = ManualClock()
    straight = turns_over(
        MemoryStore(clock=other_clock), MemoryQueue(), agents(), other_clock
    ).send("slowpoke", "go", tenant="t", environment="e")
    turns = turns_over(store, MemoryQueue(), agents(), clock)
    result = turns.send(
        "slowpoke", "go", tenant="t", environment="e", deadline=clock.monotonic() + 5
    )
    assert result.status == "running"
    rounds = 0
    while result.status == "running":
        rounds += 1
        result = turns.proceed(result.session_id, deadline=clock.monotonic() + 5)
    assert rounds >= 1
    assert result.text == straight.text == "all done"
    assert [e["type"] for e in result.events] == [e["type"] for e in straight.events]


class Crash(BaseException):
    """Stands in for the process dying mid-tool (not an Exception, so nothing catches it)."""


def test_crash_during_an_unsafe_tool_is_reported_as_interrupted(
    store: MemoryStore, clock: ManualClock
) -> None:
    effects: list[str] = []

    @tool
    def charge(amount: int, ctx: ToolContext) -> str:
        """Charges a card."""
        effects.append(ctx.idempotency_key)
        raise Crash

    agents = StaticAgents(
        {
            "payer": (
                make_agent(charge, name="payer"),
                playing(calls(("charge", {"amount": 5})), answer("ok")),
            )
        }
    )
    first = turns_over(store, MemoryQueue(), agents, clock, owner="process-1", lease_ttl=60)
    with pytest.raises(Crash):
        first.send("payer", "pay", tenant="t", environment="e", session_id="s-crash")
    record = store.sessions.load("s-crash")
    assert record is not None and record.status == "running" and record.lease_owner == "process-1"
    logged = [e["type"] for c in store.sessions.read_log("s-crash") for e in c.events]
    assert logged[-1] == "tool:started", "tool:started is durable before the tool runs"

    second = turns_over(store, MemoryQueue(), agents, clock, owner="process-2")
    # the first holder's lease is still live: a no-op, the holder goes on itself
    assert second.proceed("s-crash").session_status == "running"  # type: ignore[union-attr]
    clock.advance(61)
    done = second.proceed("s-crash")
    assert effects == [effects[0]], "the side effect happened once"
    result = [e for e in done.events if e["type"] == "tool:result"][0]
    assert result["statusText"] == "Error." and "interrupted" in result["detailText"]
    assert [e["type"] for e in done.events].count("tool:started") == 1


def test_crash_during_an_idempotent_tool_reruns_it_with_the_same_key(
    store: MemoryStore, clock: ManualClock
) -> None:
    keys: list[str] = []

    @tool(idempotent=True)
    def refund(order: str, ctx: ToolContext) -> str:
        """Refunds."""
        keys.append(ctx.idempotency_key)
        if len(keys) == 1:
            raise Crash
        return "refunded"

    agents = StaticAgents(
        {
            "refunder": (
                make_agent(refund, name="refunder"),
                playing(calls(("refund", {"order": "A"})), answer("ok")),
            )
        }
    )
    with pytest.raises(Crash):
        turns_over(store, MemoryQueue(), agents, clock, owner="p1", lease_ttl=60).send(
            "refunder", "go", tenant="t", environment="e", session_id="s-idem"
        )
    clock.advance(61)
    done = turns_over(store, MemoryQueue(), agents, clock, owner="p2").proceed("s-idem")
    assert len(keys) == 2 and keys[0] == keys[1]
    assert [e["statusText"] for e in done.events if e["type"] == "tool:result"] == ["Approved."]


def test_twenty_concurrent_resolutions_resume_once(store: MemoryStore, clock: ManualClock) -> None:
    agents = customer_service()
    turns = turns_over(store, MemoryQueue(), agents, clock)
    before = len(refunds_issued(agents))
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    start = threading.Barrier(20)
    outcomes: list[Any] = []

    def click(n: int) -> None:
        start.wait()
        try:
            outcomes.append(
                turns.resolve(
                    paused.pending.id,
                    decision="approve" if n % 2 else "deny",  # type: ignore[union-attr]
                    actor=person(f"user{n}", "api"),
                )
            )
        except AlreadyResolved as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=click, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if not isinstance(o, AlreadyResolved)]
    losers = [o for o in outcomes if isinstance(o, AlreadyResolved)]
    assert len(winners) == 1 and len(losers) == 19
    state = store.pending.get(paused.pending.id)
    assert state is not None
    assert {(o.current.status, o.current.resolved_by) for o in losers} == {
        (state.status, state.resolved_by)
    }
    ran = len(refunds_issued(agents)) - before
    assert ran == (1 if state.status == "approved" else 0)


def test_a_one_megabyte_tool_result_survives_the_pause(store: Any, clock: ManualClock) -> None:
    @tool(safe=True)
    def dump(size: int) -> str:
        """A very large result."""
        return "x" * size

    @tool
    def publish(note: str) -> str:
        """Needs a sign-off."""
        return f"published {note}"

    rules = """
default_decision: allow
rules:
  - {name: publishing-needs-approval, scope: "*/*", tool: publish, decision: ask}
"""
    model = playing(
        calls(("dump", {"size": 1_000_000})), calls(("publish", {"note": "big"})), answer("done")
    )
    agent = make_agent(dump, publish, rules=rules, name="big", budget=10_000_000)
    agents = StaticAgents({"big": (agent, model)})
    turns = turns_over(store, MemoryQueue(), agents, clock)
    paused = turns.send("big", "go", tenant="t", environment="e")
    assert paused.status == "paused" and paused.pending is not None
    stored = [m for c in store.sessions.read_log(paused.session_id) for m in c.messages]
    big = [m for m in stored if isinstance(m, ToolResultMessage)]
    assert [len(m.content) for m in big] == [1_000_000]
    done = turns.resolve(paused.pending.id, decision="approve", actor=person("a", "api"))
    assert done.text == "done"
    last_prompt = model.requests[-1].messages
    assert any(
        isinstance(m, ToolResultMessage) and len(m.content) == 1_000_000 for m in last_prompt
    )


def test_a_session_past_its_retention_starts_afresh(store: Any, clock: ManualClock) -> None:
    turns = turns_over(store, MemoryQueue(), customer_service(), clock, retention=3600)
    first = turns.send("customer-service", REFUND, tenant="default", environment="staging")
    record = store.sessions.load(first.session_id)
    assert record is not None and record.expires_at == clock.now().timestamp() + 3600
    assert all(c.expires_at == record.expires_at for c in store.sessions.read_log(first.session_id))
    clock.advance(3601)
    assert store.sessions.load(first.session_id) is None, "expired, even before the TTL sweep"
    turns.send(
        "customer-service",
        "hello",
        tenant="default",
        environment="staging",
        session_id=first.session_id,
    )
    fresh = store.sessions.load(first.session_id)
    assert fresh is not None and fresh.first_seq > record.first_seq
    history = [
        m
        for c in store.sessions.read_log(first.session_id, from_seq=fresh.first_seq)
        for m in c.messages
    ]
    assert history[0].content == "hello"  # type: ignore[union-attr]


class CrashingQueue:
    def send(self, body: dict[str, Any]) -> None:
        raise RuntimeError("the process died between the commit and the enqueue")


def test_a_crash_between_commit_and_enqueue_leaves_the_pause_intact(
    store: Any, clock: ManualClock
) -> None:
    turns = turns_over(store, CrashingQueue(), customer_service({"webhook": ["approval"]}), clock)
    with pytest.raises(RuntimeError):
        turns.send(
            "customer-service",
            REFUND,
            tenant="default",
            environment="production",
            session_id="s-fault",
        )
    record = store.sessions.load("s-fault")
    assert record is not None and record.status == "paused" and record.pending_id is not None
    item = store.pending.get(record.pending_id)
    assert item is not None and item.status == "pending"
    assert [(r.channel, r.notified_at) for r in store.outbox.rows(item.id)] == [("webhook", None)]
    # and the turn is still resumable
    resumed = turns_over(store, MemoryQueue(), customer_service(), clock).resolve(
        item.id, decision="approve", actor=person("a", "api")
    )
    assert resumed.status == "finished"


def test_proceed_resumes_a_session_whose_item_was_resolved_without_resuming(
    store: Any, clock: ManualClock
) -> None:
    turns = turns_over(store, MemoryQueue(), customer_service(), clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    # a chat click's acknowledgement: only the conditional write, the turn resumes later
    scheduled: list[str] = []
    decided = turns.decide(
        paused.pending.id,
        Approve(),
        chat_user("slack", "U123", "slack"),
        schedule=scheduled.append,
        resume=False,
    )
    assert decided.result is None and scheduled == [paused.session_id]
    assert (decided.item.status, decided.item.resolved_by) == ("approved", "U123")
    done = turns.proceed(paused.session_id)
    assert done.status == "finished" and done.text is not None
    assert done.text.startswith("Refunded 42.0 USD")
    assert store.pending.get(paused.pending.id).resumed  # type: ignore[union-attr]
    # a second delivery of the continuation: the turn is done, nothing to do
    assert turns.proceed(paused.session_id).session_status == "done"  # type: ignore[union-attr]


def test_a_safe_batch_is_in_the_log_while_its_calls_run(
    store: MemoryStore, clock: ManualClock
) -> None:
    # A watcher of the log (the status route's long-poll) sees a batch's decisions
    # and starts as they happen, not only when the batch or the turn ends.
    seen_while_running: list[list[str]] = []

    @tool(safe=True)
    def lookup(order: str) -> str:
        """Looks an order up."""
        logged = [e["type"] for c in store.sessions.read_log("s-live") for e in c.events]
        seen_while_running.append(logged)
        return "found"

    agents = StaticAgents(
        {
            "reader": (
                make_agent(lookup, name="reader"),
                playing(calls(("lookup", {"order": "A"}), text="Looking."), answer("ok")),
            )
        }
    )
    turns = turns_over(store, MemoryQueue(), agents, clock)
    turns.send("reader", "go", tenant="t", environment="e", session_id="s-live")
    assert seen_while_running == [
        ["budget:check", "assistant:text", "actauth:decision", "tool:started"]
    ]
