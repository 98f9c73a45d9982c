"""Builders for agents, scripted models and engines used across the tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from signoff.agents import Agent, AgentConfig
from signoff.clock import ManualClock
from signoff.engine import Answered, Approved, Denied, Engine, Finished, Resolution
from signoff.engine.live import run_live
from signoff.events import ApprovalPending, LoopEvent, QuestionPending
from signoff.gate import RuleSet
from signoff.messages import Message, ModelRequest, ModelResponse, ToolCall
from signoff.models.scripted import ScriptedModel

if TYPE_CHECKING:
    from signoff.agents.skills import Skill
    from signoff.tools import Tool

ALLOW_ALL = "default_decision: allow"


def make_agent(
    *tools: Tool,
    rules: str = ALLOW_ALL,
    max_turns: int = 10,
    budget: int = 100_000,
    skills: Iterable[Skill] = (),
    name: str = "test-agent",
) -> Agent:
    return Agent(
        name=name,
        directory=Path("/nonexistent") / name,
        config=AgentConfig.model_validate(
            {"system": "You are a test agent.", "maxTurns": max_turns, "budget": {"tokens": budget}}
        ),
        tools={t.name: t for t in tools},
        rules=RuleSet.model_validate(yaml.safe_load(rules)),
        skills={s.name: s for s in skills},
    )


def calls(*specs: tuple[str, dict[str, Any]], text: str = "") -> ModelResponse:
    """A model response asking for tool calls with fresh, unique ids."""
    return ModelResponse(
        text=text,
        tool_calls=tuple(ToolCall(id=f"c{next(_IDS)}", name=n, args=a) for n, a in specs),
        stop="tool_use",
    )


def answer(text: str) -> ModelResponse:
    return ModelResponse(text=text)


def _counter() -> Iterable[int]:
    n = 0
    while True:
        n += 1
        yield n


_IDS = iter(_counter())


def playing(*responses: ModelResponse) -> ScriptedModel:
    """A scripted model that plays ``responses`` in order, then keeps saying 'done'."""
    queue = list(responses)

    def respond(_: ModelRequest) -> ModelResponse:
        return queue.pop(0) if queue else answer("done")

    return ScriptedModel(respond)


def engine(agent: Agent, model: ScriptedModel, **kwargs: Any) -> Engine:
    return Engine(agent=agent, model=model, clock=kwargs.pop("clock", ManualClock()), **kwargs)


Decider = Callable[[ApprovalPending | QuestionPending, str], Resolution]


def approve_all(pending: ApprovalPending | QuestionPending, call_id: str) -> Resolution:
    if isinstance(pending, QuestionPending):
        return Answered(call_id=call_id, answer="yes")
    return Approved(call_id=call_id, actor="tester")


def deny_all(pending: ApprovalPending | QuestionPending, call_id: str) -> Resolution:
    if isinstance(pending, QuestionPending):
        return Answered(call_id=call_id, answer="no")
    return Denied(call_id=call_id, actor="tester")


def run_turn(
    eng: Engine,
    message: str = "go",
    *,
    decide: Decider = approve_all,
    history: list[Message] | None = None,
    tenant: str = "default",
    environment: str = "production",
) -> tuple[Finished, list[LoopEvent]]:
    """One live turn; the events as a streamed transport would carry them."""
    seen: list[LoopEvent] = []
    finished = run_live(
        eng,
        message=message,
        history=history if history is not None else [],
        tenant=tenant,
        environment=environment,
        session_id="s-1",
        approver=decide,
        sink=seen.append,
    )
    return finished, seen


def types(events: Iterable[LoopEvent]) -> list[str]:
    return [e.type for e in events]
