"""A step of safe calls is one write; a side effect's result is durable before the model
hears of it; a failure commits what ran; a crash re-runs only safe calls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from signoff.clock import ManualClock
from signoff.errors import ModelUnavailable
from signoff.messages import ModelRequest, ModelResponse, ToolResultMessage
from signoff.models.scripted import ScriptedModel
from signoff.queue.memory import MemoryQueue
from signoff.store.memory import MemoryStore
from signoff.tools import tool
from tests.support.agents import answer, calls, make_agent
from tests.support.durable import StaticAgents, turns_over

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.durable.turns import Turns
    from signoff.store.session_records import Commit

RAN: list[str] = []


@tool(safe=True)
def lookup(i: int) -> int:
    """A read."""
    RAN.append(f"lookup:{i}")
    return i


@tool
def write(i: int) -> int:
    """A side effect."""
    RAN.append(f"write:{i}")
    return i


class Died(BaseException):
    """The process ends here: nothing after it runs, as under SIGKILL."""


def wired(
    store: MemoryStore, respond: Callable[[ModelRequest], ModelResponse], clock: ManualClock
) -> Turns:
    agent = make_agent(lookup, write)
    agents = StaticAgents({agent.name: (agent, ScriptedModel(respond))})
    return turns_over(store, MemoryQueue(), agents, clock, lease_ttl=30.0)


def recording(store: MemoryStore) -> list[Commit]:
    commits: list[Commit] = []
    commit = store.sessions.commit

    def record(written: Commit, *, owner: str) -> Any:
        commits.append(written)
        return commit(written, owner=owner)

    store.sessions.commit = record  # type: ignore[method-assign,assignment]
    return commits


def script(*responses: ModelResponse | BaseException) -> Callable[[ModelRequest], ModelResponse]:
    queue = list(responses)

    def respond(_: ModelRequest) -> ModelResponse:
        reply = queue.pop(0) if queue else answer("done")
        if isinstance(reply, BaseException):
            raise reply
        return reply

    return respond


def results(store: MemoryStore, session_id: str) -> list[str]:
    """The tool results the session's committed log holds."""
    return [
        message.content
        for chunk in store.sessions.read_log(session_id)
        for message in chunk.messages
        if isinstance(message, ToolResultMessage)
    ]


def test_a_step_of_safe_calls_is_one_commit_that_carries_the_last_steps_results() -> None:
    RAN.clear()
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    commits = recording(store)
    steps = [calls(("lookup", {"i": i})) for i in range(5)]

    done = wired(store, script(*steps), clock).send("test-agent", "go", tenant="t", environment="e")

    assert done.status == "finished"
    # one commit per step, before its call runs, and the finish
    assert len(commits) == 6
    # each step's commit holds the previous step's result and its own decision
    for step, commit in enumerate(commits[1:5], start=1):
        assert commit.chunk is not None
        kinds = [e["type"] for e in commit.chunk.events]
        assert kinds[:2] == ["toollane:result", "tool:result"]
        assert "actauth:decision" in kinds and kinds[-1] == "tool:started"
        [result] = [m for m in commit.chunk.messages if isinstance(m, ToolResultMessage)]
        assert result.content == str(step - 1)
    assert results(store, done.session_id) == ["0", "1", "2", "3", "4"]


def test_a_side_effects_result_is_committed_before_the_model_is_asked_again() -> None:
    RAN.clear()
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    seen: list[list[str]] = []
    holder: dict[str, str] = {}

    def respond(request: ModelRequest) -> ModelResponse:
        if "session" in holder:
            seen.append(results(store, holder["session"]))
        return script_replies.pop(0) if script_replies else answer("done")

    script_replies = [calls(("write", {"i": 7})), calls(("lookup", {"i": 8}))]
    service = wired(store, respond, clock)
    original = store.sessions.claim

    def claim(*args: Any, **kwargs: Any) -> Any:
        claimed = original(*args, **kwargs)
        holder["session"] = claimed.session_id
        return claimed

    store.sessions.claim = claim  # type: ignore[method-assign]

    done = service.send("test-agent", "go", tenant="t", environment="e")

    assert done.status == "finished"
    # asked after the write: its result was committed; after the lookup: not yet,
    # it goes with the finish
    assert seen[1] == ["7"]
    assert seen[2] == ["7"]
    assert results(store, done.session_id) == ["7", "8"]


def test_a_turn_that_fails_after_a_safe_step_commits_its_results_first() -> None:
    RAN.clear()
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    failing = ModelUnavailable("provider down", provider="test")
    service = wired(store, script(calls(("lookup", {"i": 3})), failing), clock)

    with pytest.raises(ModelUnavailable):
        service.send("test-agent", "go", tenant="t", environment="e", session_id="s-f")

    assert results(store, "s-f") == ["3"]
    record = store.sessions.load("s-f")
    assert record is not None and record.state is not None and record.state.batch == []


def test_a_crash_after_a_safe_step_re_runs_its_safe_call_and_never_a_side_effect() -> None:
    RAN.clear()
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    replies = script(calls(("write", {"i": 1})), calls(("lookup", {"i": 2})), Died())

    with pytest.raises(Died):
        wired(store, replies, clock).send(
            "test-agent", "go", tenant="t", environment="e", session_id="s-c"
        )
    # the step's commit came before the lookup ran; its result died with the process
    assert results(store, "s-c") == ["1"]
    assert RAN == ["write:1", "lookup:2"]

    clock.advance(31)  # the dead process's lease runs out
    done = wired(store, script(answer("all done")), clock).proceed("s-c")

    assert done.status == "finished" and done.text == "all done"  # type: ignore[union-attr]
    assert RAN == ["write:1", "lookup:2", "lookup:2"]
    assert results(store, "s-c") == ["1", "2"]
