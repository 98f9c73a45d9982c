"""The turn engine: event order, the gate, ToolLane, pauses and resumes."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from signoff.agents.skills import Skill
from signoff.clock import ManualClock
from signoff.engine import Answered, Approved, Continue, Denied, Finished, Paused
from signoff.errors import PromptTooLong, ResolutionError, UnknownPending
from signoff.events import ApprovalPending, QuestionPending
from signoff.messages import ModelRequest, ModelResponse, ToolResultMessage, UserMessage
from signoff.models.scripted import ScriptedModel
from signoff.tools import ToolContext, tool
from tests.support.agents import (
    answer,
    calls,
    deny_all,
    engine,
    make_agent,
    playing,
    run_turn,
    types,
)

RAN: list[str] = []


@tool(safe=True)
def lookup(i: int) -> dict[str, Any]:
    """Look a number up."""
    RAN.append(f"lookup:{i}")
    return {"id": i, "status": "ok", "value": 2 * i}


@tool
def refund(order: str, amount: float) -> dict[str, Any]:
    """Refund an order."""
    RAN.append(f"refund:{order}")
    return {"refunded": amount}


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("boom")


RULES = """
default_decision: deny
rules:
  - {name: lookups, scope: "*/*", tool: lookup, decision: allow}
  - {name: refunds-need-approval, scope: "*/production/*", tool: refund, decision: ask}
  - {name: refunds-staging, scope: "*/staging/*", tool: refund, decision: allow}
  - {name: explode-ok, scope: "*/*", tool: explode, decision: allow}
"""


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def agent(**kwargs: Any) -> Any:
    return make_agent(lookup, refund, explode, rules=RULES, **kwargs)


def test_allowed_call_runs_and_the_turn_finishes() -> None:
    model = playing(calls(("lookup", {"i": 3}), text="Looking it up."), answer("It is 6."))
    finished, events = run_turn(engine(agent(), model))
    assert types(events) == [
        "session",
        "budget:check",
        "assistant:text",
        "actauth:decision",
        "tool:started",
        "toollane:result",
        "tool:result",
        "budget:check",
        "loop:done",
        "done",
    ]
    assert finished.text == "It is 6." and finished.stop_reason is None
    result = events[6]
    assert result.status_text == "Approved."  # type: ignore[union-attr]
    # the model saw the tool result in its second call
    second = model.requests[1].messages
    assert isinstance(second[-1], ToolResultMessage)
    assert second[-1].content == '{"id":3,"status":"ok","value":6}'


def test_rule_deny_refuses_without_running_and_skips_allowed_siblings() -> None:
    model = playing(
        calls(("lookup", {"i": 1}), ("unlisted", {}), ("lookup", {"i": 2})), answer("ok")
    )
    finished, events = run_turn(engine(agent(), model))
    assert RAN == []
    assert types(events)[1:-1] == [
        "budget:check",
        "actauth:decision",
        "tool:started",  # lookup 1: decided (allowed) before the deny, never run
        "actauth:decision",
        "tool:result",  # unlisted: Denied.
        "actauth:decision",
        "loop:skipped",
        "tool:result",
        "loop:skipped",
        "tool:result",
        "budget:check",
        "loop:done",
    ]
    statuses = [e.status_text for e in events if e.type == "tool:result"]  # type: ignore[union-attr]
    assert statuses == ["Denied.", "Skipped.", "Skipped."]
    assert finished.stop_reason is None  # a rule deny does not end the turn
    # the model is told about all three outcomes, in call order
    told = [m for m in model.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert [m.content.split(":")[0] for m in told] == ["Skipped", "Denied", "Skipped"]


def test_ask_then_approve_runs_the_call() -> None:
    model = playing(calls(("refund", {"order": "A-1", "amount": 5})), answer("Refunded."))
    finished, events = run_turn(engine(agent(), model))
    assert RAN == ["refund:A-1"]
    assert types(events)[1:-1] == [
        "budget:check",
        "actauth:decision",
        "approval:pending",
        "tool:started",
        "toollane:result",
        "tool:result",
        "budget:check",
        "loop:done",
    ]
    pending = events[3]
    assert isinstance(pending, ApprovalPending)
    assert (
        pending.scope.agent == "test-agent"
        and pending.reason == "matched rule 'refunds-need-approval'"
    )
    assert finished.text == "Refunded."


def test_human_deny_stops_the_turn_and_skips_approved_siblings() -> None:
    model = playing(
        calls(("lookup", {"i": 1}), ("refund", {"order": "A-1", "amount": 5}), ("lookup", {"i": 2}))
    )
    finished, events = run_turn(engine(agent(), model), decide=deny_all)
    assert RAN == []
    assert finished.stop_reason == "denied"
    assert types(events)[-9:-1] == [
        "approval:pending",
        "tool:result",  # refund: Denied. by the human
        "actauth:decision",  # the last lookup is still decided, for the record
        "loop:skipped",
        "tool:result",
        "loop:skipped",
        "tool:result",
        "loop:denied",
    ]
    assert types(events)[-1] == "done"
    assert events[-2].denied_tools == ["refund"]  # type: ignore[union-attr]
    assert len(model.requests) == 1, "no model call after a human deny"
    statuses = [e.status_text for e in events if e.type == "tool:result"]  # type: ignore[union-attr]
    assert sorted(statuses) == ["Denied.", "Skipped.", "Skipped."]


def test_staging_needs_no_approval() -> None:
    model = playing(calls(("refund", {"order": "A-1", "amount": 5})), answer("done"))
    _, events = run_turn(engine(agent(), model), environment="staging")
    assert "approval:pending" not in types(events)
    assert RAN == ["refund:A-1"]


def test_max_turns_ends_with_a_synthetic_finish() -> None:
    model = ScriptedModel(lambda _req: calls(("lookup", {"i": 1}), text="again"))
    finished, events = run_turn(engine(agent(max_turns=3), model))
    assert finished.stop_reason == "max_turns"
    assert types(events)[-2:] == ["loop:max_turns", "done"]
    assert events[-1].stop_reason == "max_turns"  # type: ignore[union-attr]
    assert len(model.requests) == 3


@pytest.mark.parametrize(
    ("request_", "fragment"),
    [
        (("lookup", {"i": "not a number"}), "invalid arguments for lookup: i:"),
        (("lookup", {}), "i: Field required"),
        (("explode", {}), "RuntimeError: boom"),
    ],
)
def test_bad_calls_become_errors_the_model_can_read(
    request_: tuple[str, dict[str, Any]], fragment: str
) -> None:
    model = playing(calls(request_), answer("sorry"))
    finished, events = run_turn(engine(agent(), model))
    result = next(e for e in events if e.type == "tool:result")
    assert result.status_text == "Error."  # type: ignore[union-attr]
    told = [m for m in model.requests[1].messages if isinstance(m, ToolResultMessage)][0]
    assert told.is_error and fragment in told.content
    assert finished.text == "sorry"


def test_unknown_tool_allowed_by_a_wildcard_is_an_error_naming_the_tools() -> None:
    agent_ = make_agent(lookup, rules="default_decision: allow")
    model = playing(calls(("frobnicate", {})), answer("ok"))
    _, events = run_turn(engine(agent_, model))
    result = next(e for e in events if e.type == "tool:result")
    assert result.status_text == "Error."  # type: ignore[union-attr]
    assert "unknown tool 'frobnicate'; available tools: lookup" in result.detail_text  # type: ignore[union-attr]
    assert "tool:started" not in types(events)


def test_safe_tools_run_concurrently() -> None:
    # The timeout only bounds how long a failure takes: passing takes no time of it.
    barrier = threading.Barrier(3, timeout=30)

    @tool(safe=True)
    def wait_for_the_others(n: int) -> int:
        """Waits until three calls are running at once."""
        barrier.wait()
        return n

    model = playing(calls(*[("wait_for_the_others", {"n": n}) for n in (1, 2, 3)]), answer("ok"))
    _finished, events = run_turn(engine(make_agent(wait_for_the_others), model))
    results = [e for e in events if e.type == "tool:result"]
    # Run one at a time, the first call would wait 30 s on the barrier and break it.
    assert [r.status_text for r in results] == ["Approved."] * 3  # type: ignore[union-attr]
    told = [m.content for m in model.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert told == ["1", "2", "3"], "results go back in call order"


def test_unsafe_tools_run_alone_in_order() -> None:
    order: list[str] = []
    inside = threading.Lock()

    @tool
    def step(name: str) -> str:
        """One side effect at a time."""
        assert inside.acquire(blocking=False), "two unsafe tools ran at once"
        order.append(name)
        inside.release()
        return name

    model = playing(calls(*[("step", {"name": n}) for n in "abcd"]), answer("ok"))
    run_turn(engine(make_agent(step), model))
    assert order == list("abcd")


def test_tool_context_carries_a_stable_idempotency_key() -> None:
    seen: list[ToolContext] = []

    @tool
    def pay(ctx: ToolContext) -> str:
        """Pays."""
        seen.append(ctx)
        return "paid"

    model = playing(calls(("pay", {})), answer("ok"))
    eng = engine(make_agent(pay), model)
    outcome = eng.start(
        history=[], message="go", tenant="t", environment="e", session_id="s", run_id="r1"
    )
    assert isinstance(outcome, Finished)
    assert "ctx" not in pay.parameters["properties"]
    assert seen[0].idempotency_key == f"r1:{seen[0].call_id}"


def test_question_pauses_and_the_answer_becomes_the_result() -> None:
    model = playing(
        calls(("ask_user", {"question": "Which order?", "options": ["A-1", "A-2"]})),
        answer("ok"),
    )
    eng = engine(agent(), model)
    history: list[Any] = []
    outcome = eng.start(
        history=history, message="refund", tenant="t", environment="e", session_id="s"
    )
    assert isinstance(outcome, Paused)
    assert isinstance(outcome.pending, QuestionPending)
    assert outcome.pending.options == ["A-1", "A-2"]
    assert "actauth:decision" not in types(outcome.events), "ask_user is never gated"
    call_id = outcome.state.awaiting_call
    assert call_id is not None
    with pytest.raises(ResolutionError):
        eng.resume(outcome.state, history, Approved(call_id=call_id))
    done = eng.resume(outcome.state, history, Answered(call_id=call_id, answer="A-2"))
    assert isinstance(done, Finished)
    told = [m for m in model.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert told[0].content == "A-2" and not told[0].is_error
    assert types(done.events)[0] == "tool:result"


def test_a_resolution_for_a_call_never_asked_about_is_refused() -> None:
    model = playing(calls(("refund", {"order": "A-1", "amount": 5})))
    eng = engine(agent(), model)
    history: list[Any] = []
    paused = eng.start(
        history=history, message="go", tenant="t", environment="production", session_id="s"
    )
    assert isinstance(paused, Paused)
    with pytest.raises(UnknownPending):
        eng.resume(paused.state, history, Approved(call_id="never-asked"))
    assert RAN == []


def test_two_asks_in_one_batch_pause_one_at_a_time() -> None:
    model = playing(
        calls(("refund", {"order": "A-1", "amount": 1}), ("refund", {"order": "A-2", "amount": 2})),
        answer("both done"),
    )
    eng = engine(agent(), model)
    history: list[Any] = []
    first = eng.start(
        history=history, message="go", tenant="t", environment="production", session_id="s"
    )
    assert isinstance(first, Paused) and first.pending.args["order"] == "A-1"
    second = eng.resume(first.state, history, Approved(call_id=first.state.awaiting_call or ""))
    assert isinstance(second, Paused) and second.pending.args["order"] == "A-2"
    assert RAN == []
    done = eng.resume(second.state, history, Approved(call_id=second.state.awaiting_call or ""))
    assert isinstance(done, Finished) and RAN == ["refund:A-1", "refund:A-2"]


def test_denying_the_second_ask_skips_the_approved_first() -> None:
    model = playing(
        calls(("refund", {"order": "A-1", "amount": 1}), ("refund", {"order": "A-2", "amount": 2}))
    )
    eng = engine(agent(), model)
    history: list[Any] = []
    first = eng.start(
        history=history, message="go", tenant="t", environment="production", session_id="s"
    )
    assert isinstance(first, Paused)
    second = eng.resume(first.state, history, Approved(call_id=first.state.awaiting_call or ""))
    assert isinstance(second, Paused)
    done = eng.resume(
        second.state, history, Denied(call_id=second.state.awaiting_call or "", reason="too much")
    )
    assert isinstance(done, Finished) and done.stop_reason == "denied"
    assert RAN == []
    assert types(done.events) == ["tool:result", "loop:skipped", "tool:result", "loop:denied"]


def test_skill_tool_loads_the_body() -> None:
    skill = Skill(name="refunds", description="How refunds work", body="Refund in full.")
    model = playing(calls(("Skill", {"name": "refunds"})), answer("ok"))
    _, events = run_turn(engine(make_agent(lookup, skills=[skill]), model))
    assert "refunds: How refunds work" in model.requests[0].system
    assert types(events)[1:-2] == [
        "budget:check",
        "tool:started",
        "skill:loaded",
        "toollane:result",
        "tool:result",
        "budget:check",
    ]
    told = [m for m in model.requests[1].messages if isinstance(m, ToolResultMessage)][0]
    assert told.content == "Refund in full."


def test_budget_nudges_then_compacts_keeping_the_tail() -> None:
    big = "x" * 400  # ~100 tokens per message
    model = ScriptedModel(lambda req: calls(("lookup", {"i": len(req.messages)}), text=big))
    eng = engine(make_agent(lookup, budget=600, max_turns=8), model)
    finished, events = run_turn(eng, big)
    actions = [e.action for e in events if e.type == "budget:check"]  # type: ignore[union-attr]
    assert actions[0] == "ok"
    assert "nudge" in actions and "over_hard_limit" in actions
    compactions = [e for e in events if e.type == "prompt:compaction"]
    assert compactions and all(c.to < c.from_ for c in compactions)  # type: ignore[union-attr]
    nudged = [r for r, a in zip(model.requests, actions, strict=True) if a == "nudge"]
    assert "finish" in nudged[0].system.lower() or "concise" in nudged[0].system.lower()
    compacted = model.requests[actions.index("over_hard_limit")]
    # the task stays first, and a note in the messages says what went
    assert compacted.messages[0] == UserMessage(content=big)
    assert "earlier messages were omitted" in compacted.messages[1].content
    # a tool result is never the first message of a compacted prompt
    assert not isinstance(compacted.messages[0], ToolResultMessage)
    assert finished.stop_reason == "max_turns"


def test_prompt_too_long_compacts_and_retries_once() -> None:
    rejected = {"n": 0}

    def respond(req: ModelRequest) -> ModelResponse:
        if len(req.messages) > 3 and rejected["n"] == 0:
            rejected["n"] += 1
            raise PromptTooLong("too long", provider="test", status=400)
        if len(req.messages) < 5:
            return calls(("lookup", {"i": 1}), text="more")
        return answer("fine")

    model = ScriptedModel(respond)
    finished, events = run_turn(engine(make_agent(lookup), model))
    assert rejected["n"] == 1
    assert "prompt:compaction" in types(events)
    assert finished.text in ("fine", "done") or finished.stop_reason == "max_turns"


def test_deadline_yields_continue_and_continuing_gives_the_same_result() -> None:
    clock = ManualClock()

    @tool
    def slow(i: int) -> int:
        """Takes ten seconds of the clock."""
        clock.advance(10)
        return i * 2

    def script() -> ScriptedModel:
        return playing(
            calls(("slow", {"i": 1})), calls(("slow", {"i": 2})), answer("two lookups done")
        )

    straight, straight_events = run_turn(engine(make_agent(slow), script()))

    eng = engine(make_agent(slow), script(), clock=clock)
    history: list[Any] = []
    outcome = eng.start(
        history=history,
        message="go",
        tenant="default",
        environment="production",
        session_id="s-1",
        deadline=clock.monotonic() + 5,
    )
    # the first tool overran the deadline, so the turn yields before the next model call
    assert isinstance(outcome, Continue)
    assert types(outcome.events)[-1] == "tool:result"
    pieces = list(outcome.events)
    while isinstance(outcome, Continue):
        outcome = eng.proceed(outcome.state, history, deadline=clock.monotonic() + 5)
        pieces += outcome.events
    assert isinstance(outcome, Finished)
    assert outcome.text == straight.text
    assert types(pieces) == types(straight_events)[1:-1]
