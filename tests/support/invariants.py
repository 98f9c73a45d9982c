"""The ordering rules of protocol v1 (and docs/protocol.md), checked on one turn."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from signoff.engine.system_tools import ASK_USER, SKILL
from signoff.events import (
    ActauthDecision,
    ApprovalPending,
    BudgetCheck,
    Done,
    LoopDenied,
    LoopDone,
    LoopEvent,
    LoopMaxTurns,
    LoopSkipped,
    QuestionPending,
    SessionEvent,
    ToollaneResult,
    ToolResult,
    ToolStarted,
)

if TYPE_CHECKING:
    from signoff.messages import ModelRequest

TERMINAL = (LoopDone, LoopMaxTurns, LoopDenied)


def check_turn(events: list[LoopEvent], requests: list[ModelRequest], requested: list[Any]) -> None:
    """Assert every ordering invariant; ``requested`` are the ToolCalls the model made."""
    assert isinstance(events[0], SessionEvent), "session must come first"
    assert isinstance(events[-1], Done), "done must come last"
    assert sum(isinstance(e, SessionEvent) for e in events) == 1
    assert sum(isinstance(e, Done) for e in events) == 1
    terminal = [i for i, e in enumerate(events) if isinstance(e, TERMINAL)]
    assert len(terminal) == 1, f"exactly one terminal engine event, got {terminal}"
    assert terminal[0] == len(events) - 2, "the terminal engine event comes right before done"
    done = events[-1]
    assert isinstance(done, Done)
    kind = events[terminal[0]]
    expected_stop = {LoopDone: None, LoopMaxTurns: "max_turns", LoopDenied: "denied"}[type(kind)]
    assert done.stop_reason == expected_stop

    # budget:check exactly once per model call
    assert sum(isinstance(e, BudgetCheck) for e in events) == len(requests)

    by_id: dict[str, list[tuple[int, LoopEvent]]] = defaultdict(list)
    for i, e in enumerate(events):
        if isinstance(e, ToolStarted | ToolResult):
            by_id[e.id].append((i, e))
    results = {cid: [e for _, e in evs if isinstance(e, ToolResult)] for cid, evs in by_id.items()}
    gated = [c for c in requested if c.name not in (ASK_USER, SKILL)]
    decisions = [e for e in events if isinstance(e, ActauthDecision)]
    assert len(decisions) == len(gated), "one actauth:decision per gated tool call"

    human_denied: list[str] = []
    for call in requested:
        outcome = results.get(call.id, [])
        if isinstance(kind, LoopDenied) and not outcome:
            continue  # the turn stopped before later batches
        assert len(outcome) == 1, f"exactly one tool:result for {call.id}: {outcome}"
        result = outcome[0]
        started = [(i, e) for i, e in by_id[call.id] if isinstance(e, ToolStarted)]
        result_at = next(i for i, e in by_id[call.id] if isinstance(e, ToolResult))
        assert len(started) <= 1
        if result.status_text in ("Denied.", "Answered."):
            assert not started, f"{result.status_text} call {call.id} must not have tool:started"
        if started and call.name != SKILL:
            # tool:started fires the instant a call is decided: right after the rule's
            # allow, or right after the approval:pending a person approved.
            before = events[started[0][0] - 1]
            assert (
                isinstance(before, ActauthDecision)
                and before.decision == "allow"
                and before.tool == call.name
            ) or (isinstance(before, ApprovalPending) and before.tool == call.name), (
                f"tool:started of {call.id} is not where it was decided: after {before.type}"
            )
        if result.status_text == "Approved.":
            assert started and started[0][0] < result_at
            # toollane:result for this tool sits between its start and its result
            lane = [
                i
                for i in range(started[0][0], result_at)
                if isinstance(events[i], ToollaneResult) and events[i].name == call.name  # type: ignore[union-attr]
            ]
            assert lane, f"toollane:result missing for {call.id}"
        if result.status_text == "Skipped.":
            assert isinstance(events[result_at - 1], LoopSkipped)
        if result.status_text == "Denied." and "Denied by" in (result.detail_text or ""):
            human_denied.append(call.name)
        if call.name != ASK_USER and call.name != SKILL:
            decided = [
                i
                for i, e in enumerate(events)
                if isinstance(e, ActauthDecision) and e.tool == call.name
            ]
            assert decided and min(decided) < result_at

    # A batch's calls are all decided before any of them runs: within one model step
    # (between two budget:checks) no tool:started follows a toollane:result.
    step: list[LoopEvent] = []
    for e in [*events, BudgetCheck.model_construct()]:
        if isinstance(e, BudgetCheck):
            lanes = [i for i, x in enumerate(step) if isinstance(x, ToollaneResult)]
            starts = [i for i, x in enumerate(step) if isinstance(x, ToolStarted)]
            if lanes and starts:
                assert max(starts) < min(lanes), "a tool:started after a call of its batch ran"
            step = []
        else:
            step.append(e)

    pendings = [e for e in events if isinstance(e, ApprovalPending | QuestionPending)]
    assert len({p.id for p in pendings}) == len(pendings), "each pause has its own pending id"
    for i, e in enumerate(events):
        if isinstance(e, ApprovalPending):
            # the gate said "ask" for this tool right before it paused
            decision = events[i - 1]
            assert isinstance(decision, ActauthDecision) and decision.decision == "ask"
            assert decision.tool == e.tool
    if isinstance(kind, LoopDenied):
        assert kind.denied_tools == human_denied and human_denied
    else:
        assert not human_denied
