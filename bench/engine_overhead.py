"""The engine's own overhead per tool-calling step, and a fresh process's first turn.

Workload: a scripted model asks for ``lookup(i)`` (a safe tool returning
``{"id": i, "status": "ok", "value": 2*i}``) once per step for N steps, then
answers. Per step = (median run(N) - median run(0)) / N, so the fixed cost of a
turn cancels out. Printed in microseconds for N = 20 and N = 100; the figure
should be small and not grow with N.

Then the first turn of a fresh process (``bench/first_turn.py``): in fresh
interpreters, after the imports a turn needs, the time to build the agent and
to run a one-step turn (one ``lookup`` call, then the answer) through ``Turns``
over the in-memory store, which checkpoints it as a deployed turn is; then a
second such turn in the same process. Medians of ``--runs`` processes.

    python bench/engine_overhead.py [--repeat 31] [--runs 15] [--only steps|fresh]
    python bench/engine_overhead.py --profile 30   # cProfile of one first turn
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import first_turn
from signoff.agents import Agent, AgentConfig
from signoff.clock import SystemClock
from signoff.engine import Engine, Finished
from signoff.gate import RuleSet
from signoff.messages import ModelRequest, ModelResponse, ToolCall, ToolResultMessage
from signoff.models.scripted import ScriptedModel
from signoff.tools import tool


@tool(safe=True)
def lookup(i: int) -> dict[str, Any]:
    """Look a number up."""
    return {"id": i, "status": "ok", "value": 2 * i}


def build_agent() -> Agent:
    """The benchmark's agent: ``lookup`` allowed by default, a budget it never reaches."""
    return Agent(
        name="bench",
        directory=Path("."),
        config=AgentConfig.model_validate(
            {"system": "Benchmark agent.", "maxTurns": 200, "budget": {"tokens": 10_000_000}}
        ),
        tools={"lookup": lookup},
        rules=RuleSet.model_validate({"default_decision": "allow"}),
        skills={},
    )


def script(steps: int) -> ScriptedModel:
    """Asks for lookup(0) … lookup(steps - 1), one per model call, then answers."""
    calls = iter(range(steps))

    def respond(_: ModelRequest) -> ModelResponse:
        step = next(calls, None)
        if step is None:
            return ModelResponse(text=f"looked up {steps} values")
        call = ToolCall(id=f"call_{step}", name="lookup", args={"i": step})
        return ModelResponse(tool_calls=(call,), stop="tool_use")

    return ScriptedModel(respond)


def one_step() -> ScriptedModel:
    """Asks for lookup(1) after the user's message and answers after its result, every turn."""

    def respond(request: ModelRequest) -> ModelResponse:
        if isinstance(request.messages[-1], ToolResultMessage):
            return ModelResponse(text="looked it up")
        call = ToolCall(id="call_1", name="lookup", args={"i": 1})
        return ModelResponse(tool_calls=(call,), stop="tool_use")

    return ScriptedModel(respond)


def run_once(engine: Engine, steps: int) -> float:
    engine.model = script(steps)
    started = time.perf_counter()
    outcome = engine.start(
        history=[], message="go", tenant="default", environment="production", session_id="b"
    )
    elapsed = time.perf_counter() - started
    assert isinstance(outcome, Finished), outcome
    assert outcome.state.model_calls == steps + 1
    return elapsed


def per_step_us(engine: Engine, steps: int, repeat: int) -> float:
    base = statistics.median(run_once(engine, 0) for _ in range(repeat))
    full = statistics.median(run_once(engine, steps) for _ in range(repeat))
    return (full - base) / steps * 1e6


def steps_line(repeat: int) -> str:
    engine = Engine(agent=build_agent(), model=script(0), clock=SystemClock())
    for _ in range(3):  # warm up imports, pydantic validators and the thread pool
        run_once(engine, 20)
    figures = {n: per_step_us(engine, n, repeat) for n in (20, 100)}
    return (
        f"engine overhead per tool-calling step: N=20 {figures[20]:.1f} us, "
        f"N=100 {figures[100]:.1f} us (target <= 100 us, flat in N)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--runs", type=int, default=15, help="fresh processes")
    parser.add_argument("--only", choices=("steps", "fresh"))
    parser.add_argument("--profile", type=int, metavar="N", help="top N of a first turn")
    args = parser.parse_args()
    if args.profile:
        print(first_turn.profile(args.profile), end="")
        return
    if args.only != "fresh":
        print(steps_line(args.repeat), flush=True)
    if args.only != "steps":
        print(first_turn.line(first_turn.medians(args.runs)))


if __name__ == "__main__":
    main()
