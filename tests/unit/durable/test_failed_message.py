"""A message whose turn fails before its first commit: the failure is logged, the session freed.

Before, the session stayed ``running`` with nothing to re-drive: the status route
showed no events and every later message got 409 for good.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from signoff.clock import ManualClock
from signoff.durable.journal import failure_text
from signoff.errors import ConfigError, ModelRejected, ModelUnavailable, SignoffError
from signoff.models.scripted import ScriptedModel
from signoff.queue.memory import MemoryQueue
from signoff.store.memory import MemoryStore
from tests.support.agents import answer, make_agent
from tests.support.durable import StaticAgents, turns_over

if TYPE_CHECKING:
    from signoff.durable.turns import Turns
    from signoff.messages import ModelRequest, ModelResponse


class Flaky:
    """A model that fails while ``down`` and answers otherwise."""

    def __init__(self) -> None:
        self.down = True

    def __call__(self, _: ModelRequest) -> ModelResponse:
        if self.down:
            raise ModelUnavailable("provider down", provider="test")
        return answer("hello")


def setup() -> tuple[MemoryStore, Flaky, Turns]:
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    model = Flaky()
    agent = make_agent()
    agent = type(agent)(
        **{
            **agent.__dict__,
            "config": agent.config.model_copy(update={"notify": {"hook": ["run_start"]}}),
        }
    )
    agents = StaticAgents({"test-agent": (agent, ScriptedModel(model))})
    return store, model, turns_over(store, MemoryQueue(), agents, clock)


def logged(store: MemoryStore, session_id: str) -> list[dict[str, object]]:
    return [e for chunk in store.sessions.read_log(session_id) for e in chunk.events]


def test_a_failed_first_message_is_logged_with_its_error_and_frees_the_session() -> None:
    store, model, turns = setup()
    with pytest.raises(ModelUnavailable):
        turns.send("test-agent", "hi", tenant="t", environment="e", session_id="s1")
    record = store.sessions.load("s1")
    assert record is not None
    assert (record.status, record.lease_owner, record.state) == ("idle", None, None)
    assert [e["type"] for e in logged(store, "s1")] == ["budget:check", "error"]
    assert logged(store, "s1")[-1]["error"] == "provider down"
    # The failed message is not part of the conversation, and no run was announced.
    assert all(not chunk.messages for chunk in store.sessions.read_log("s1"))
    assert store.outbox.unsent(created_before=1e12) == []

    model.down = False
    done = turns.send("test-agent", "hi", tenant="t", environment="e", session_id="s1")
    assert done.status == "finished" and done.text == "hello"


def test_a_failed_later_message_leaves_the_finished_session_as_it_was() -> None:
    store, model, turns = setup()
    model.down = False
    turns.send("test-agent", "first", tenant="t", environment="e", session_id="s1")
    model.down = True
    with pytest.raises(ModelUnavailable):
        turns.send("test-agent", "second", tenant="t", environment="e", session_id="s1")
    record = store.sessions.load("s1")
    assert record is not None
    assert (record.status, record.text, record.lease_owner) == ("done", "hello", None)
    assert record.message_count == 2  # first and its answer; not the failed second
    assert [e["type"] for e in logged(store, "s1")][-2:] == ["budget:check", "error"]


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (ModelUnavailable("openai: timed out", provider="openai"), "openai: timed out"),
        (ModelRejected("openai: 400 bad model", provider="openai"), "openai: 400 bad model"),
        (ConfigError("/srv/agents/x/agent.yaml", "model", "bad"), "internal error"),
        (SignoffError("table signoff-prod unreachable"), "internal error"),
        (RuntimeError("secret in a traceback"), "internal error"),
    ],
)
def test_the_logged_error_says_what_the_api_says_and_withholds_what_it_withholds(
    error: BaseException, text: str
) -> None:
    assert failure_text(error) == text
