"""The seed's channel rule for lifecycle announcements, through the durable turns.

loopengine's ``onRunStart`` / ``onRunFinish`` never fire for ``cli`` / ``http_stream``
(the caller sees ``session`` and ``done`` on the stream) and fire for every other
run: ``http``, a scheduled run, a caller that names no channel. A resumed run
counts as the channel it started on, whoever resolved it and through what.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.agents import load_agent
from signoff.clock import ManualClock
from signoff.models.factory import build_model
from signoff.queue.memory import MemoryQueue
from signoff.run_channels import RunChannel, announces
from signoff.store.memory import MemoryStore
from tests.support.actors import person
from tests.support.durable import StaticAgents, turns_over

AGENTS = Path(__file__).resolve().parents[3] / "agents"
REFUND = "order A-1001 arrived broken, can you refund it?"
NOTIFY = {"webhook": ["approval", "run_start", "run_finish"]}


def announced(store: MemoryStore, run_id: str, pending_id: str) -> list[str]:
    """The lifecycle subjects of a run that have outbox rows, start to finish."""
    subjects = [
        f"run:{run_id}:run_start",
        f"run:{run_id}:run_start:{pending_id}",
        f"run:{run_id}:run_finish",
    ]
    return [
        subject.removeprefix(f"run:{run_id}:") for subject in subjects if store.outbox.rows(subject)
    ]


def paused_and_approved(
    channel: RunChannel | None, resolved_through: str
) -> tuple[MemoryStore, str, str]:
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    agent = load_agent(AGENTS / "customer-service")
    agent = type(agent)(
        **{**agent.__dict__, "config": agent.config.model_copy(update={"notify": NOTIFY})}
    )
    agents = StaticAgents({agent.name: (agent, build_model(agent.config.model, agent.directory))})
    turns = turns_over(store, MemoryQueue(), agents, clock)
    paused = turns.send(
        agent.name, REFUND, tenant="default", environment="production", channel=channel
    )
    assert paused.pending is not None
    done = turns.resolve(
        paused.pending.id, decision="approve", actor=person("alice", resolved_through)
    )
    assert done.status == "finished"
    return store, paused.pending.run_id, paused.pending.id


@pytest.mark.parametrize("resolved_through", ["api", "link", "slack"])
@pytest.mark.parametrize("channel", ["http", "schedule", None])
def test_a_run_on_a_channel_nobody_watches_is_announced_at_start_resume_and_finish(
    channel: RunChannel | None, resolved_through: str
) -> None:
    store, run_id, pending_id = paused_and_approved(channel, resolved_through)
    assert announced(store, run_id, pending_id) == [
        "run_start",
        f"run_start:{pending_id}",
        "run_finish",
    ]


@pytest.mark.parametrize("resolved_through", ["api", "link", "slack"])
@pytest.mark.parametrize("channel", ["cli", "http_stream"])
def test_a_run_on_a_live_channel_is_never_announced_not_even_when_resumed(
    channel: RunChannel, resolved_through: str
) -> None:
    # The approval arrives through another route, but the run is still the stream's:
    # the open stream carries its resumed events and its done.
    store, run_id, pending_id = paused_and_approved(channel, resolved_through)
    assert announced(store, run_id, pending_id) == []
    # The pending item's own notification is not a lifecycle announcement: it is sent.
    assert [row.channel for row in store.outbox.rows(pending_id)] == ["webhook"]


def test_the_rule_is_the_seeds_two_live_channels() -> None:
    assert [announces(c) for c in ("cli", "http", "http_stream", "schedule", None)] == [
        False,
        True,
        False,
        True,
        True,
    ]


@pytest.mark.parametrize(
    ("channel", "expected"),
    [("http", ["run_start", "run_start:{id}", "run_finish"]), ("http_stream", [])],
)
def test_an_expired_item_resumes_its_run_as_the_channel_it_started_on(
    channel: RunChannel, expected: list[str]
) -> None:
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    agent = load_agent(AGENTS / "customer-service")
    config = agent.config.model_copy(update={"notify": NOTIFY})
    agent = type(agent)(**{**agent.__dict__, "config": config})
    agents = StaticAgents({agent.name: (agent, build_model(agent.config.model, agent.directory))})
    turns = turns_over(store, MemoryQueue(), agents, clock)
    paused = turns.send(
        agent.name, REFUND, tenant="default", environment="production", channel=channel
    )
    assert paused.pending is not None
    # The sweeper's move: nobody decided in time, the run resumes as denied.
    clock.advance(paused.pending.expires_at - clock.now().timestamp() + 1)
    decided = turns.expire(paused.pending)
    assert decided.result is not None and decided.result.stop_reason == "denied"
    pending_id = paused.pending.id
    assert announced(store, paused.pending.run_id, pending_id) == [
        subject.format(id=pending_id) for subject in expected
    ]
