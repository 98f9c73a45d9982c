"""A continuation is delivered at least once: one for a session with nothing to
continue is a logged no-op, never an error (Lambda would retry it twice).

Paused on a person, finished, or run by another live process: ``proceed``
answers what it found and changes nothing. Once the holder's lease has run out,
the same continuation re-drives the turn.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from signoff.agents import load_agent
from signoff.durable.sweeper import Sweeper
from signoff.durable.turns import Turns
from signoff.models.factory import build_model
from signoff.queue.memory import MemoryQueue
from signoff.tools import ToolContext, tool
from tests.support.actors import person
from tests.support.agents import answer, calls, make_agent, playing
from tests.support.durable import StaticAgents, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.clock import ManualClock

AGENTS = Path(__file__).resolve().parents[3] / "agents"
REFUND = "order A-1001 arrived broken, can you refund it?"


class Crash(BaseException):
    """Stands in for the process dying mid-tool (not an Exception, so nothing catches it)."""


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def skipped(self) -> list[tuple[str, str]]:
        """(session, status) of each "continuation skipped" line, from its structured keys."""
        return [
            (r.__dict__["session_id"], r.__dict__["session_status"])
            for r in self.records
            if r.getMessage().startswith("continuation skipped")
        ]


@pytest.fixture
def logged() -> Iterator[Records]:
    handler = Records()
    logger = logging.getLogger("signoff.durable.turns")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def customer_service() -> StaticAgents:
    agent = load_agent(AGENTS / "customer-service")
    return StaticAgents({agent.name: (agent, build_model(agent.config.model, agent.directory))})


def stored(store: Any, session_id: str, pending_id: str | None = None) -> tuple[Any, ...]:
    """Everything a continuation could change: the session, its log, its item, its audit."""
    session = store.sessions.load(session_id)
    chunks = [chunk.model_dump() for chunk in store.sessions.read_log(session_id)]
    item = store.pending.get(pending_id) if pending_id else None
    audit = store.audit.for_subject(session_id)
    return session, chunks, item, audit


def test_a_continuation_for_a_session_waiting_on_a_person_is_a_logged_no_op(
    store: Any, clock: ManualClock, logged: Records
) -> None:
    turns = turns_over(store, MemoryQueue(), customer_service(), clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    before = stored(store, paused.session_id, paused.pending.id)

    skipped = turns.proceed(paused.session_id)

    assert (skipped.session_id, skipped.session_status, skipped.pending_id) == (
        paused.session_id,
        "paused",
        paused.pending.id,
    )
    assert stored(store, paused.session_id, paused.pending.id) == before
    assert store.pending.get(paused.pending.id).status == "pending"
    assert logged.skipped() == [(paused.session_id, "paused")]


def test_a_continuation_for_a_finished_session_is_a_logged_no_op(
    store: Any, clock: ManualClock, logged: Records
) -> None:
    agents = customer_service()
    turns = turns_over(store, MemoryQueue(), agents, clock)
    paused = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert paused.pending is not None
    done = turns.resolve(paused.pending.id, decision="approve", actor=person("alice", "api"))
    assert done.status == "finished"
    before = stored(store, paused.session_id, paused.pending.id)

    # twice: the delivery and Lambda's retry of it
    first = turns.proceed(paused.session_id)
    second = turns.proceed(paused.session_id)

    assert (first.session_status, second.session_status) == ("done", "done")
    assert stored(store, paused.session_id, paused.pending.id) == before
    assert logged.skipped() == [(paused.session_id, "done"), (paused.session_id, "done")]


def test_a_continuation_waits_for_a_live_holder_and_re_drives_once_its_lease_runs_out(
    store: Any, clock: ManualClock, logged: Records
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
    first = turns_over(store, MemoryQueue(), agents, clock, owner="p1", lease_ttl=60)
    with pytest.raises(Crash):
        first.send("refunder", "go", tenant="t", environment="e", session_id="s-held")
    before = stored(store, "s-held")
    assert before[0].lease_owner == "p1"
    second = turns_over(store, MemoryQueue(), agents, clock, owner="p2")

    # p1's lease is live: p1 finishes (or yields, or dies and its lease runs out) on its own
    held = second.proceed("s-held")
    assert (held.session_id, held.session_status) == ("s-held", "running")
    assert stored(store, "s-held") == before and len(keys) == 1
    assert logged.skipped() == [("s-held", "running")]

    clock.advance(61)  # p1 is gone: the same continuation now re-drives the turn
    done = second.proceed("s-held")
    assert done.status == "finished" and done.text == "ok"
    assert len(keys) == 2 and keys[0] == keys[1]
    assert logged.skipped() == [("s-held", "running")]


class TakenAfterListing:
    """Sessions whose stalled turns another process claims right after the sweeper lists
    them: the turn's own continuation arriving at the same moment."""

    def __init__(self, sessions: Any, clock: ManualClock) -> None:
        self._sessions = sessions
        self._clock = clock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sessions, name)

    def stalled_in(self, shard: int, before: float) -> Iterator[Any]:
        found = list(self._sessions.stalled_in(shard, before))
        now = self._clock.now().timestamp()
        for record in found:
            self._sessions.claim(record, purpose="redrive", owner="p3", until=now + 900, now=now)
        return iter(found)


def test_the_sweepers_re_drive_of_a_turn_a_continuation_took_is_not_counted(
    store: Any, clock: ManualClock, logged: Records
) -> None:
    @tool(idempotent=True)
    def refund(order: str) -> str:
        """Refunds."""
        raise Crash

    agents = StaticAgents(
        {
            "refunder": (
                make_agent(refund, name="refunder"),
                playing(calls(("refund", {"order": "A"}))),
            )
        }
    )
    with pytest.raises(Crash):
        turns_over(store, MemoryQueue(), agents, clock, owner="p1", lease_ttl=60).send(
            "refunder", "go", tenant="t", environment="e", session_id="s-raced"
        )
    clock.advance(600)  # p1's lease ran out long ago: the sweeper lists the turn
    sessions = TakenAfterListing(store.sessions, clock)
    turns = Turns(
        catalog=agents,
        sessions=sessions,
        pending=store.pending,
        audit=store.audit,
        queue=MemoryQueue(),
        clock=clock,
        model_for=agents.model_for,
    )
    sweeper = Sweeper(
        turns=turns,
        sessions=sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=MemoryQueue(),
        clock=clock,
    )

    report = sweeper.sweep()

    assert report.redriven == []
    assert store.sessions.load("s-raced").lease_owner == "p3"
    assert logged.skipped() == [("s-raced", "running")]
