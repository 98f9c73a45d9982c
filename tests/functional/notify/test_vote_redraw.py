"""Votes through ``Turns.decide``, on each store adapter: a vote short of the quorum
leaves the turn waiting and has the chat messages already sent redrawn with the
tally (buttons kept); the vote that reaches it resumes the turn, the tool runs once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from signoff.approver.actors import chat_user
from signoff.channels.memory import RecordingChat
from signoff.channels.subject import Subject
from signoff.durable.decide import Approve
from signoff.errors import AlreadyVoted
from signoff.keys.tokens import signer_from
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier
from signoff.queue.memory import MemoryQueue
from signoff.secrets.memory import MemorySecrets
from signoff.tools import tool
from tests.support.actors import person
from tests.support.agents import answer, calls, make_agent, playing
from tests.support.durable import StaticAgents, Store, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.clock import ManualClock
    from signoff.models.scripted import ScriptedModel

RULES = (
    "default_decision: allow\nrules:\n"
    "  - name: refunds\n    scope: '*'\n    tool: refund\n    decision: ask\n    approvals: 2\n"
)


def deliver_all(hub: Notifier, queue: MemoryQueue) -> list[str]:
    delivered = [message["pendingId"] for message in queue.receive(100)]
    for subject in delivered:
        hub.deliver(subject)
    return delivered


@pytest.fixture
def world(store: Store, clock: ManualClock) -> Any:
    runs: list[float] = []

    @tool
    def refund(amount: float) -> str:
        """Refund ``amount``."""
        runs.append(amount)
        return f"refunded {amount}"

    agent: Agent = make_agent(refund, rules=RULES, name="refunder")
    config = agent.config.model_validate(
        {**agent.config.model_dump(by_alias=True), "notify": {"slack": ["approval"]}}
    )
    agent = type(agent)(**{**agent.__dict__, "config": config})
    model: ScriptedModel = playing(calls(("refund", {"amount": 40})), answer("all done"))
    queue = MemoryQueue()
    turns = turns_over(store, queue, StaticAgents({agent.name: (agent, model)}), clock)
    slack = RecordingChat("slack")
    signer = signer_from(MemorySecrets({"resume-signing": "k" * 32}))
    composer = Composer(signer=signer, public_url="https://api.example.com")
    hub = Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels={"slack": slack},
        composer=lambda: composer,
        clock=clock,
    )
    return turns, queue, hub, slack, runs


def test_a_vote_short_of_the_quorum_redraws_the_sent_messages(world: Any) -> None:
    turns, queue, hub, slack, runs = world
    paused = turns.send("refunder", "refund order 1", tenant="acme", environment="production")
    item = paused.pending
    deliver_all(hub, queue)
    assert slack.refreshed == []

    voted = turns.decide(item.id, Approve(), chat_user("slack", "U1", "slack"), schedule=None)

    assert voted.result is None and voted.item.status == "pending"
    assert deliver_all(hub, queue) == [str(Subject.votes(item.id, 1))]
    [(receipt, redrawn)] = slack.refreshed
    assert receipt  # the message the item's own row sent
    assert redrawn.approvals == "1 of 2 approvals — U1"
    assert "Approvals: 1 of 2 approvals — U1" in (redrawn.card_rows() or "")
    assert redrawn.approve_url is not None, "the buttons stay for the other approvers"
    assert runs == []

    with pytest.raises(AlreadyVoted):
        turns.decide(item.id, Approve(), chat_user("slack", "U1", "slack"), schedule=None)

    decided = turns.decide(item.id, Approve(), chat_user("slack", "U2", "slack"), schedule=None)

    assert decided.item.status == "approved"
    assert decided.result is not None and decided.result.status == "finished"
    assert runs == [40.0], "the tool ran once"
    deliver_all(hub, queue)
    assert len(slack.refreshed) == 1, "a decided item's messages show its outcome, not a tally"


def test_resolve_leaves_the_turn_paused_on_a_vote_short_of_the_quorum(world: Any) -> None:
    turns, _, _, _, runs = world
    paused = turns.send("refunder", "refund order 1", tenant="acme", environment="production")

    waiting = turns.resolve(paused.pending.id, decision="approve", actor=person("alice", "api"))

    assert waiting.status == "paused"
    assert waiting.pending is not None and waiting.pending.id == paused.pending.id
    assert waiting.pending.tally == "1 of 2 approvals — alice"
    done = turns.resolve(paused.pending.id, decision="approve", actor=person("bob", "api"))
    assert done.status == "finished" and runs == [40.0]
