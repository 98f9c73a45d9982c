"""Replaying a rules change over recorded history (``signoff.approvals.replay``, ``testing``).

The history is recorded by real turns (the durable engine on the in-memory store)
or, for 1,000 calls, written through the store's API the way the journal writes
a step. Every expected set is actauth's: each recorded call decided by actauth
under the old and the new file, independently of signoff's gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import yaml

from signoff.approvals.replay import recorded_calls
from signoff.clock import ManualClock
from signoff.errors import ConfigError
from signoff.gate import RuleSet, rules_from
from signoff.messages import AssistantMessage, ToolCall
from signoff.queue.memory import MemoryQueue
from signoff.store.memory import MemoryStore
from signoff.store.session_records import LogChunk, SessionRecord
from signoff.testing import replay_rules
from tests.support.agents import calls, make_agent, playing
from tests.support.builders import T0
from tests.support.durable import StaticAgents, turns_over
from tests.support.replay_history import (
    AGENT,
    LOOSER_RULES,
    OLD_RULES,
    TIGHTER_RULES,
    drive_turns,
    expected_changes,
    gate,
    issue_refund,
    random_calls,
    write_calls,
)

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.approvals.replay import Replay

DAY = 86400.0


def changed(replay: Replay) -> set[tuple[str, str, str, str]]:
    return {
        (c.call.session_id, c.call.call_id, c.call.decision, c.decision) for c in replay.changes
    }


def test_calls_recorded_by_real_turns_replay_to_exactly_actauths_changes(tmp_path: Path) -> None:
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    made = drive_turns(store, clock)
    old = gate(OLD_RULES, tmp_path)
    start = clock.now().timestamp() - DAY

    for new_rules in (TIGHTER_RULES, LOOSER_RULES):
        replay = replay_rules(
            store, AGENT, rules_from_text(new_rules), since=start, until=clock.now()
        )
        expected = expected_changes(made, old, gate(new_rules, tmp_path), since=start)
        assert changed(replay) == expected
        assert replay.calls == sum(1 for call in made if call.gated) == 7
        assert replay.unmatched == 0
    # the looser file lets acme's production cancels through: two were asked about
    loosened = [(c.call.tool, c.call.decision, c.decision) for c in replay.less_guarded]
    assert loosened == [("cancel_order", "ask", "allow")] * 2
    assert {(t.old_rule, t.new_rule) for t in replay.transitions} >= {
        ("cancel-production", "acme-cancels"),
        ("small-refunds", "refunds"),  # the refund of 30: allowed before, asked now
        ("refunds", "huge-refunds"),  # the refund of 700: asked before, refused now
    }


def rules_from_text(text: str) -> RuleSet:
    return rules_from(yaml.safe_load(text), "new-actauth.yml", AGENT)


def test_a_thousand_recorded_calls_report_exactly_the_changed_set(tmp_path: Path) -> None:
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    now = T0 + 30 * DAY
    made = random_calls(1000, start=now - 10 * DAY, end=now)
    old, tighter, looser = (gate(r, tmp_path) for r in (OLD_RULES, TIGHTER_RULES, LOOSER_RULES))
    write_calls(store, made, old)
    since = now - 7 * DAY
    in_window = [call for call in made if call.gated and call.at >= since]

    replay = replay_rules(store, AGENT, rules_from_text(TIGHTER_RULES), since=since, until=now)
    assert replay.calls == len(in_window) > 500
    assert changed(replay) == expected_changes(made, old, tighter, since=since)
    assert len(replay.changes) > 50 and not replay.less_guarded

    replay = replay_rules(store, AGENT, rules_from_text(LOOSER_RULES), since=since, until=now)
    expected = expected_changes(made, old, looser, since=since)
    assert changed(replay) == expected
    assert (
        {(s, c) for s, c, old_d, new_d in expected if (old_d, new_d) == ("ask", "allow")}
        == {(c.call.session_id, c.call.call_id) for c in replay.less_guarded}
        != set()
    )
    assert sum(t.count for t in replay.transitions) == len(replay.changes)


def test_one_tenant_replays_only_its_own_calls(tmp_path: Path) -> None:
    store = MemoryStore(clock=ManualClock())
    now = T0 + 30 * DAY
    made = random_calls(200, start=now - DAY, end=now, seed=3)
    old = gate(OLD_RULES, tmp_path)
    write_calls(store, made, old)
    acme = [call for call in made if call.tenant == "acme"]

    replay = replay_rules(
        store, AGENT, rules_from_text(LOOSER_RULES), since=now - DAY, until=now, tenant="acme"
    )
    assert replay.calls == sum(1 for call in acme if call.gated)
    assert changed(replay) == expected_changes(
        acme, old, gate(LOOSER_RULES, tmp_path), since=now - DAY
    )


def test_the_test_helper_takes_a_rules_file_and_names_its_errors(tmp_path: Path) -> None:
    store = MemoryStore(clock=ManualClock())
    path = tmp_path / "actauth.yml"
    path.write_text(OLD_RULES)
    assert replay_rules(store, AGENT, path, until=T0).calls == 0
    path.write_text("rules:\n  - {name: x, scope: '*/*/*', tool: t, decision: maybe}\n")
    with pytest.raises(ConfigError) as raised:
        replay_rules(store, AGENT, path, until=T0)
    assert raised.value.file == str(path) and "decision" in raised.value.field


def test_decisions_pair_with_their_calls_in_order_past_ungated_ones() -> None:
    session = SessionRecord(session_id="s", agent=AGENT, tenant="t", environment="e")
    asked = AssistantMessage(
        tool_calls=(
            ToolCall(id="q", name="ask_user", args={"question": "?"}),
            ToolCall(id="a", name="issue_refund", args={"amount": 1}),
            ToolCall(id="b", name="issue_refund", args={"amount": 2}),
        )
    )

    def decided(tool: str) -> dict[str, str]:
        return {"type": "actauth:decision", "tool": tool, "decision": "ask", "reason": "r"}

    chunks = [
        LogChunk(
            session_id="s",
            seq=0,
            run_id="r",
            messages=[asked],
            events=[decided("issue_refund")],
            at=1,
        ),
        # a failed turn logs its decision, not its message: nothing to pair it with
        LogChunk(session_id="s", seq=1, run_id="", events=[decided("cancel_order")], at=2),
        LogChunk(session_id="s", seq=2, run_id="r", events=[decided("issue_refund")], at=3),
    ]
    found, unmatched, _ = recorded_calls(session, chunks, since=0, until=10)
    assert [(c.call_id, c.args, c.at) for c in found] == [
        ("a", {"amount": 1}, 1),
        ("b", {"amount": 2}, 3),
    ]
    assert unmatched == 1
    # outside the window a decision still takes its call: the next one keeps its own
    found, unmatched, _ = recorded_calls(session, chunks, since=2.5, until=10)
    assert [c.call_id for c in found] == ["b"] and unmatched == 0


QUORUM_RULES = """\
default_decision: deny
rules:
  - {name: refunds, scope: "*/*/*", tool: issue_refund, decision: ask, approvals: 2}
"""


def test_an_ask_that_needs_fewer_approvals_than_it_did_is_less_guarded() -> None:
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    model = playing(calls(("issue_refund", {"order_id": "A-1", "amount": 90})))
    quorum_agent = make_agent(issue_refund, rules=QUORUM_RULES, name=AGENT)
    turns = turns_over(store, MemoryQueue(), StaticAgents({AGENT: (quorum_agent, model)}), clock)
    paused = turns.send(AGENT, "refund A-1", tenant="acme", environment="production")
    assert paused.pending is not None and paused.pending.policy is not None
    since, until = clock.now().timestamp() - 60, clock.now()

    def replay(approvals: int) -> Replay:
        new = QUORUM_RULES.replace("approvals: 2", f"approvals: {approvals}")
        return replay_rules(store, AGENT, rules_from_text(new), since=since, until=until)

    assert replay(2).changes == ()
    one = replay(1)
    (change,) = one.changes
    assert (change.call.approvals, change.approvals, change.less_guarded) == (2, 1, True)
    assert (change.call.label, change.label) == ("ask(2)", "ask")
    assert one.to_json()["changes"][0]["fromApprovals"] == 2
    (raised,) = replay(3).changes
    assert (raised.call.label, raised.label, raised.less_guarded) == ("ask(2)", "ask(3)", False)
