"""Who decided is a type: the sweeper's decisions are ``SystemActor`` values no request
builds, and a person's decision meets the item's policy whatever its channel is named.

Issue 24's hole: ``Decisions.decide`` skipped an item's policy (its ``from`` and its
vote count) for an actor whose channel was named ``expiry`` or ``escalation`` — names
``channels.yaml`` accepted. ``channels.yaml`` now refuses them
(``test_channels_config``); here that check is bypassed (the agent is built in
memory, its channel never loaded) to show the policy holds by itself: through a
channel named like the sweeper's, eve (whom the rule's ``from`` leaves out) is
refused, an approver's approval is one vote of two, and the audit records a person's
decision or refusal, never the sweeper's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from signoff.approver.actors import ESCALATION, EXPIRY, link_recipient
from signoff.durable.decide import Approve
from signoff.errors import Forbidden
from signoff.gate.people import People
from signoff.queue.memory import MemoryQueue
from signoff.tools import tool
from tests.support.agents import answer, calls, make_agent, playing
from tests.support.durable import StaticAgents, Store, turns_over
from tests.support.durable import clock as clock
from tests.support.durable import store as store

if TYPE_CHECKING:
    from signoff.clock import ManualClock
    from signoff.durable.turns import Turns

EVE, ALICE, BOB = "eve@example.com", "alice@example.com", "bob@example.com"
RULES = (
    "default_decision: allow\nrules:\n"
    "  - name: refunds\n    scope: '*'\n    tool: refund\n    decision: ask\n"
    "    approvals: 2\n    from: [finance]\n"
)
PEOPLE = People.model_validate(
    {
        "people": {"alice": {"email": ALICE}, "bob": {"email": BOB}},
        "groups": {"finance": ["alice", "bob"]},
    }
)


def _refunds(store: Store, clock: ManualClock, channel: str) -> tuple[Turns, list[float]]:
    """An agent that notifies ``channel`` (never loaded from channels.yaml) of approvals."""
    ran: list[float] = []

    @tool
    def refund(amount: float) -> str:
        """Refund ``amount``."""
        ran.append(amount)
        return f"refunded {amount}"

    agent = make_agent(refund, rules=RULES, name="refunder")
    config = agent.config.model_validate(
        {**agent.config.model_dump(by_alias=True), "notify": {channel: ["approval"]}}
    )
    agent = type(agent)(**{**agent.__dict__, "config": config, "people": PEOPLE})
    model = playing(calls(("refund", {"amount": 500})), answer("refunded"))
    turns = turns_over(store, MemoryQueue(), StaticAgents({agent.name: (agent, model)}), clock)
    return turns, ran


def _paused(turns: Turns) -> Any:
    paused = turns.send("refunder", "refund order 7", tenant="acme", environment="production")
    assert paused.pending is not None and paused.pending.status == "pending"
    return paused.pending


@pytest.mark.parametrize("channel", ["escalation", "expiry"])
def test_an_outsider_through_a_channel_named_like_the_sweepers_is_refused(
    store: Store, clock: ManualClock, channel: str
) -> None:
    turns, ran = _refunds(store, clock, channel)
    item = _paused(turns)

    with pytest.raises(Forbidden, match="not one of the approvers this request names"):
        turns.decide(item.id, Approve(), link_recipient(EVE, channel), schedule=None)

    assert turns.decisions.item(item.id).status == "pending"
    assert turns.decisions.item(item.id).votes == []
    assert ran == [], "the refund did not run"
    entries = list(store.audit.for_subject(item.session_id))
    assert [(e.kind, e.actor, e.channel) for e in entries if e.kind != "rule"] == [
        ("refusal", EVE, channel)
    ]


@pytest.mark.parametrize("channel", ["escalation", "expiry"])
def test_an_approver_through_such_a_channel_casts_one_vote_of_two(
    store: Store, clock: ManualClock, channel: str
) -> None:
    turns, ran = _refunds(store, clock, channel)
    item = _paused(turns)

    voted = turns.decide(item.id, Approve(), link_recipient(ALICE, channel), schedule=None)

    assert voted.result is None and voted.item.status == "pending"
    assert voted.item.tally == "1 of 2 approvals — alice"
    assert ran == []
    decided = turns.decide(item.id, Approve(), link_recipient(BOB, channel), schedule=None)
    assert decided.item.status == "approved" and ran == [500.0]
    kinds = [e.kind for e in store.audit.for_subject(item.session_id) if e.kind != "rule"]
    assert sorted(kinds) == ["human", "vote"], "a person's decisions, never the sweeper's"


def test_the_sweepers_moves_are_its_own_type_and_decide_outright(
    store: Store, clock: ManualClock
) -> None:
    turns, ran = _refunds(store, clock, "ops-mail")
    item = _paused(turns)

    # decide takes a person only: the sweeper has no way through it
    with pytest.raises(TypeError, match="takes a person's Actor"):
        turns.decisions.decide(item, Approve(), ESCALATION)  # type: ignore[arg-type]

    escalated = turns.escalate(item, "approve", after=3600)

    assert escalated.item.status == "approved" and ran == [500.0]
    assert (escalated.item.resolved_by, escalated.item.resolved_via) == ("sweeper", "escalation")
    [entry] = [e for e in store.audit.for_subject(item.session_id) if e.kind == "escalation"]
    assert (entry.actor, entry.channel) == ("sweeper", "escalation")


def test_an_expiry_is_recorded_as_the_sweepers(store: Store, clock: ManualClock) -> None:
    turns, _ = _refunds(store, clock, "ops-mail")
    item = _paused(turns)
    clock.advance(item.expires_at - clock.now().timestamp() + 1)

    expired = turns.expire(item)

    assert expired.item.status == "expired"
    assert (expired.item.resolved_by, expired.item.resolved_via) == (EXPIRY.id, EXPIRY.channel)
    kinds = [e.kind for e in store.audit.for_subject(item.session_id) if e.kind != "rule"]
    assert kinds == ["expiry"]
