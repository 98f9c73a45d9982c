"""``tool:started`` fires "the instant a call is decided, before it runs" (PROTOCOL.md v1).

In a batch every call is decided first, in call order (its ``actauth:decision`` and,
when it will run, its ``tool:started`` right after); then ToolLane runs the batch
and each call gets its ``toollane:result`` + ``tool:result``. An ``ask`` call's
``tool:started`` comes when a person approves it, after its ``approval:pending``; a
call denied, or answered (``ask_user``), never gets one; a sibling already decided
when another is denied keeps its ``tool:started`` and gets ``loop:skipped`` + its
``tool:result`` ``Skipped.`` (v1's diagram).
"""

from __future__ import annotations

from typing import Any

from signoff.clock import ManualClock
from signoff.queue.memory import MemoryQueue
from signoff.store.memory import MemoryStore
from signoff.tools import tool
from tests.support.actors import person
from tests.support.agents import answer, calls, deny_all, engine, make_agent, playing, run_turn
from tests.support.durable import StaticAgents, turns_over

RAN: list[str] = []


@tool(safe=True)
def lookup(i: int) -> int:
    """A read, safe to run beside others."""
    RAN.append(f"lookup:{i}")
    return i


@tool
def write(i: int) -> int:
    """A side effect: runs alone."""
    RAN.append(f"write:{i}")
    return i


@tool
def refund(i: int) -> int:
    """Needs a person's approval."""
    RAN.append(f"refund:{i}")
    return i


RULES = """
default_decision: deny
rules:
  - {name: lookups, scope: "*/*", tool: lookup, decision: allow}
  - {name: writes, scope: "*/*", tool: write, decision: allow}
  - {name: refunds, scope: "*/*", tool: refund, decision: ask}
"""


def agent() -> Any:
    return make_agent(lookup, write, refund, rules=RULES)


def shape(events: list[Any]) -> list[str]:
    """Each event as ``type`` or ``type tool`` (the ``name`` of toollane/loop:skipped)."""
    out = []
    for e in events:
        wire = e if isinstance(e, dict) else e.model_dump(by_alias=True)
        who = wire.get("tool") or wire.get("name")
        out.append(f"{wire['type']} {who}" if who else wire["type"])
    return out


def test_every_call_of_a_batch_is_started_when_decided_before_any_of_them_runs() -> None:
    RAN.clear()
    model = playing(calls(("write", {"i": 1}), ("lookup", {"i": 2}), ("write", {"i": 3})))
    _, events = run_turn(engine(agent(), model))
    assert shape(events)[2:14] == [
        "actauth:decision write",
        "tool:started write",
        "actauth:decision lookup",
        "tool:started lookup",
        "actauth:decision write",
        "tool:started write",
        "toollane:result write",
        "tool:result write",
        "toollane:result lookup",
        "tool:result lookup",
        "toollane:result write",
        "tool:result write",
    ]
    assert RAN == ["write:1", "lookup:2", "write:3"]


def test_concurrent_safe_calls_are_each_started_at_their_decision() -> None:
    model = playing(calls(("lookup", {"i": 1}), ("lookup", {"i": 2})))
    _, events = run_turn(engine(agent(), model))
    assert shape(events)[2:10] == [
        "actauth:decision lookup",
        "tool:started lookup",
        "actauth:decision lookup",
        "tool:started lookup",
        "toollane:result lookup",
        "tool:result lookup",
        "toollane:result lookup",
        "tool:result lookup",
    ]


def test_an_asked_call_is_started_when_approved_and_its_allowed_sibling_before_the_pause() -> None:
    RAN.clear()
    model = playing(calls(("lookup", {"i": 1}), ("refund", {"i": 2})))
    _, events = run_turn(engine(agent(), model))
    assert shape(events)[2:12] == [
        "actauth:decision lookup",
        "tool:started lookup",
        "actauth:decision refund",
        "approval:pending refund",
        "tool:started refund",
        "toollane:result lookup",
        "tool:result lookup",
        "toollane:result refund",
        "tool:result refund",
        "budget:check",
    ]


def test_a_durable_pause_already_carries_the_started_sibling_and_the_resume_the_approved_call() -> (
    None
):
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    model = playing(calls(("lookup", {"i": 1}), ("refund", {"i": 2})), answer("ok"))
    turns = turns_over(store, MemoryQueue(), StaticAgents({"test-agent": (agent(), model)}), clock)
    paused = turns.send("test-agent", "go", tenant="t", environment="e")
    assert paused.pending is not None
    assert shape(paused.events)[1:] == [
        "actauth:decision lookup",
        "tool:started lookup",
        "actauth:decision refund",
        "approval:pending refund",
    ]
    done = turns.resolve(paused.pending.id, decision="approve", actor=person("alice", "api"))
    resumed = shape(done.events)[len(paused.events) :]
    assert resumed[:5] == [
        "tool:started refund",
        "toollane:result lookup",
        "tool:result lookup",
        "toollane:result refund",
        "tool:result refund",
    ]
    started = [e for e in done.events if e["type"] == "tool:started"]
    assert [e["detailText"] for e in started] == [
        "matched rule 'lookups'",
        "matched rule 'refunds'; approved by alice",
    ]


def test_a_denied_call_never_starts_and_a_sibling_decided_before_it_is_skipped() -> None:
    RAN.clear()
    model = playing(calls(("lookup", {"i": 1}), ("refund", {"i": 2})), answer("ok"))
    finished, events = run_turn(engine(agent(), model), decide=deny_all)
    assert shape(events)[2:10] == [
        "actauth:decision lookup",
        "tool:started lookup",
        "actauth:decision refund",
        "approval:pending refund",
        "tool:result refund",
        "loop:skipped lookup",
        "tool:result lookup",
        "loop:denied",
    ]
    assert RAN == [] and finished.stop_reason == "denied"
