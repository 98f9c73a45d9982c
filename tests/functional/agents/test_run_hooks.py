"""``hooks.py``'s ``on_run_start`` / ``on_run_finish`` through durable turns, per channel.

Given the sample agents with a recording ``hooks.py``, when turns run on each channel,
pause, are resolved and finish, then the hooks fire where the seed says (``http``,
``schedule``, no channel) with the seed's context, never for ``cli`` / ``http_stream``
(a resumed run keeps its channel), once per start and once per genuine finish — the
finish of a paused run in the call that resumed it, never at the pause — and a failing
or slow hook costs the turn nothing but a bounded wait.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import pytest

from signoff.agents import hooks as hooks_module
from signoff.agents import load_agent
from signoff.approver.actors import chat_user
from signoff.clock import ManualClock
from signoff.durable.decide import verdict_of
from signoff.models.factory import build_model
from signoff.queue.memory import MemoryQueue
from signoff.store.memory import MemoryStore
from tests.support.actors import person
from tests.support.durable import StaticAgents, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store
from tests.support.hooks import agents_with_hooks, hook_calls, named

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.durable.results import TurnResult
    from signoff.durable.turns import Turns
    from signoff.run_channels import RunChannel
    from signoff.store.dynamodb import DynamoStore

REFUND = "order A-1001 arrived broken, can you refund it?"
WHERE = "where is order A-1001?"
SLOW_HOOK = 30.0  # seconds each hook of agents_with_hooks(mode="slow") sleeps


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "hooks.jsonl"


def hooked_turns(
    tmp_path: Path, log: Path, store: MemoryStore | DynamoStore, *, mode: str = "record"
) -> Turns:
    agents = agents_with_hooks(tmp_path, log, mode=mode)
    loaded = {}
    for name in ("customer-service", "daily-digest"):
        agent = load_agent(agents / name)
        loaded[name] = (agent, build_model(agent.config.model, agent.directory))
    return turns_over(store, MemoryQueue(), StaticAgents(loaded), ManualClock())


def send(turns: Turns, message: str, channel: Any) -> TurnResult:
    """``message`` to customer-service (acme, production) on ``channel``."""
    return turns.send(
        "customer-service", message, tenant="acme", environment="production", channel=channel
    )


def refund_paused(turns: Turns, channel: RunChannel) -> TurnResult:
    """The refund message on ``channel``, paused on its approval."""
    paused = send(turns, REFUND, channel)
    assert paused.pending is not None
    return paused


@pytest.mark.parametrize("channel", ["http", "schedule", None])
def test_a_run_on_an_announced_channel_fires_both_hooks_with_the_seeds_context(
    tmp_path: Path, log: Path, channel: str | None
) -> None:
    turns = hooked_turns(tmp_path, log, MemoryStore(clock=ManualClock()))

    done = send(turns, WHERE, channel)

    assert done.status == "finished"
    start, finish = hook_calls(log)
    assert {k: start[k] for k in ("hook", "agent", "tenant", "sessionId", "channel")} == {
        "hook": "on_run_start",
        "agent": "customer-service",
        "tenant": "acme",
        "sessionId": done.session_id,
        "channel": channel,
    }
    assert start["trigger"] == "message"
    assert finish["hook"] == "on_run_finish" and finish["channel"] == channel
    assert (finish["text"], finish["stopReason"]) == (done.text, None)


@pytest.mark.parametrize("channel", ["cli", "http_stream"])
def test_a_run_on_a_live_channel_fires_no_hook(tmp_path: Path, log: Path, channel: str) -> None:
    turns = hooked_turns(tmp_path, log, MemoryStore(clock=ManualClock()))

    done = send(turns, WHERE, channel)

    assert done.status == "finished"
    assert hook_calls(log) == []


def test_a_paused_run_finishes_once_in_the_call_that_resumes_it(
    tmp_path: Path, log: Path, store: MemoryStore | DynamoStore
) -> None:
    turns = hooked_turns(tmp_path, log, store)

    # when a message pauses on a refund approval
    paused = refund_paused(turns, "http")
    assert paused.status == "paused"

    # then the run started, and nothing finished at the pause
    (start,) = hook_calls(log)
    assert (start["hook"], start["trigger"]) == ("on_run_start", "message")

    # when the approval resumes it (as the resolve function does), it finishes there, once
    done = turns.resolve(paused.pending.id, decision="approve", actor=person("alice", "api"))
    calls = hook_calls(log)
    assert [(c["hook"], c.get("trigger")) for c in calls] == [
        ("on_run_start", "message"),
        ("on_run_start", "resolution"),
        ("on_run_finish", None),
    ]
    finish = calls[-1]
    assert (finish["channel"], finish["sessionId"], finish["text"]) == (
        "http",
        paused.session_id,
        done.text,
    )


def test_a_denied_run_finishes_with_its_stop_reason(tmp_path: Path, log: Path) -> None:
    turns = hooked_turns(tmp_path, log, MemoryStore(clock=ManualClock()))
    paused = refund_paused(turns, "schedule")

    turns.resolve(paused.pending.id, decision="deny", actor=person("alice", "api"))

    (finish,) = named(hook_calls(log), "on_run_finish")
    assert (finish["stopReason"], finish["channel"]) == ("denied", "schedule")


def test_a_streamed_run_resumed_by_an_approval_still_fires_nothing(
    tmp_path: Path, log: Path, store: MemoryStore | DynamoStore
) -> None:
    turns = hooked_turns(tmp_path, log, store)
    paused = refund_paused(turns, "http_stream")

    done = turns.resolve(paused.pending.id, decision="approve", actor=person("alice", "api"))

    assert done.status == "finished"
    assert hook_calls(log) == [], "the open stream carries the resumed run to done"


def test_a_run_resumed_by_a_continuation_fires_its_resolution_start_there(
    tmp_path: Path, log: Path
) -> None:
    turns = hooked_turns(tmp_path, log, MemoryStore(clock=ManualClock()))
    paused = refund_paused(turns, "http")
    # a chat click decides without resuming; the continuation resumes
    decided = turns.decide(
        paused.pending.id,
        verdict_of("approve", None, None),
        chat_user("slack", "U1", "slack"),
        schedule=None,
        resume=False,
    )
    assert decided.result is None
    assert [c["hook"] for c in hook_calls(log)] == ["on_run_start"]

    turns.proceed(paused.session_id)

    calls = hook_calls(log)
    assert [(c["hook"], c.get("trigger")) for c in calls] == [
        ("on_run_start", "message"),
        ("on_run_start", "resolution"),
        ("on_run_finish", None),
    ]


def test_a_failing_hook_does_not_fail_the_turn(
    tmp_path: Path, log: Path, caplog: pytest.LogCaptureFixture
) -> None:
    turns = hooked_turns(tmp_path, log, MemoryStore(clock=ManualClock()), mode="fail")

    with caplog.at_level(logging.WARNING, logger="signoff.agents.hooks"):
        done = send(turns, WHERE, "http")

    assert done.status == "finished" and done.text and "delivered with PostNL" in done.text
    assert [c["hook"] for c in hook_calls(log)] == ["on_run_start", "on_run_finish"]
    failures = [r for r in caplog.records if "failed" in r.getMessage()]
    assert {(r.__dict__["agent"], r.__dict__["hook"]) for r in failures} == {
        ("customer-service", "on_run_start"),
        ("customer-service", "on_run_finish"),
    }


def test_a_slow_hook_holds_the_turn_no_longer_than_the_bound(
    tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(hooks_module, "HOOK_WAIT", 0.3)
    turns = hooked_turns(tmp_path, log, MemoryStore(clock=ManualClock()), mode="slow")

    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="signoff.agents.hooks"):
        done = send(turns, WHERE, "http")
    took = time.monotonic() - began

    assert done.status == "finished"
    assert [c["hook"] for c in hook_calls(log)] == ["on_run_start", "on_run_finish"]
    # The turn went on while each hook still ran: its bound ended the wait, not the hook
    assert sorted(r.__dict__["hook"] for r in caplog.records if "still runs" in r.getMessage()) == [
        "on_run_finish",
        "on_run_start",
    ]
    # and did not wait for one after all: a turn held until a hook ended takes a slow
    # hook's whole sleep at least, so half of it is room for a loaded machine.
    assert took < SLOW_HOOK / 2, f"the turn took {took:.1f} s: it waited for a slow hook"


def test_an_expired_run_finishes_denied_where_the_sweeper_expires_it(
    tmp_path: Path, log: Path
) -> None:
    turns = hooked_turns(tmp_path, log, MemoryStore(clock=ManualClock()))
    paused = refund_paused(turns, "http")
    clock = turns.clock
    assert isinstance(clock, ManualClock)
    clock.advance(paused.pending.expires_at - clock.now().timestamp() + 1)

    expired = turns.expire(paused.pending)

    assert expired.result is not None and expired.result.stop_reason == "denied"
    calls = hook_calls(log)
    assert [(c["hook"], c.get("trigger"), c.get("stopReason")) for c in calls] == [
        ("on_run_start", "message", None),
        ("on_run_start", "resolution", None),
        ("on_run_finish", None, "denied"),
    ]
