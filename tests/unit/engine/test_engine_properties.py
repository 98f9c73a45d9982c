"""Property test: random scripted turns always keep the protocol's ordering rules."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff.engine import Answered, Approved, Denied, Resolution
from signoff.events import ApprovalPending, QuestionPending
from signoff.messages import ModelRequest, ModelResponse, ToolCall
from signoff.models.scripted import ScriptedModel
from signoff.tools import tool
from tests.support.agents import engine, make_agent, run_turn
from tests.support.invariants import check_turn


@tool(safe=True)
def read_safe(n: int) -> int:
    """A safe read."""
    return n


@tool
def write_unsafe(n: int) -> int:
    """A side effect."""
    return n


@tool
def needs_approval(n: int) -> int:
    """Asks a human first."""
    return n


@tool
def refused(n: int) -> int:
    """Refused by a rule."""
    return n


@tool(safe=True)
def broken(n: int) -> int:
    """Always raises."""
    raise ValueError(f"broken {n}")


RULES = """
default_decision: deny
rules:
  - {name: reads, scope: "*/*", tool: read_safe, decision: allow}
  - {name: writes, scope: "*/*", tool: write_unsafe, decision: allow}
  - {name: broken, scope: "*/*", tool: broken, decision: allow}
  - {name: approvals, scope: "*/*", tool: needs_approval, decision: ask}
"""
AGENT_TOOLS = (read_safe, write_unsafe, needs_approval, refused, broken)
CALL = st.one_of(
    st.sampled_from(["read_safe", "write_unsafe", "needs_approval", "refused", "broken"]).map(
        lambda name: (name, {"n": 1})
    ),
    st.just(("read_safe", {"n": "bad"})),  # invalid arguments
    st.just(("no_such_tool", {})),
    st.just(("ask_user", {"question": "which?", "options": ["a", "b"]})),
)
STEPS = st.lists(st.lists(CALL, min_size=1, max_size=4), max_size=5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=STEPS,
    max_turns=st.integers(min_value=1, max_value=6),
    preamble=st.booleans(),
    decisions=st.lists(st.booleans(), min_size=20, max_size=20),
)
def test_every_random_turn_keeps_the_ordering_invariants(
    steps: list[list[tuple[str, dict[str, Any]]]],
    max_turns: int,
    preamble: bool,
    decisions: list[bool],
) -> None:
    requested: list[ToolCall] = []
    queue = list(steps)

    def respond(_: ModelRequest) -> ModelResponse:
        if not queue:
            return ModelResponse(text="final answer")
        batch = tuple(
            ToolCall(id=f"c{len(requested) + i}", name=name, args=args)
            for i, (name, args) in enumerate(queue.pop(0))
        )
        requested.extend(batch)
        return ModelResponse(text="working" if preamble else "", tool_calls=batch, stop="tool_use")

    answers = iter(decisions)

    def decide(pending: ApprovalPending | QuestionPending, call_id: str) -> Resolution:
        if isinstance(pending, QuestionPending):
            return Answered(call_id=call_id, answer="a")
        if next(answers, True):
            return Approved(call_id=call_id)
        return Denied(call_id=call_id)

    model = ScriptedModel(respond)
    agent = make_agent(*AGENT_TOOLS, rules=RULES, max_turns=max_turns)
    _, events = run_turn(engine(agent, model), decide=decide)
    check_turn(events, model.requests, requested)
