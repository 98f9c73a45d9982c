"""The engine's own overhead per tool-calling step, in-process.

Workload: a scripted model asks for ``lookup(i)`` (a safe tool returning
``{"id": i, "status": "ok", "value": 2*i}``) once per step for N steps, then
answers. Per step = (median run(N) - median run(0)) / N, so the fixed cost of a
turn cancels out. Printed in microseconds for N = 20 and N = 100; the figure
should be small and not grow with N.

    python bench/engine_overhead.py [--repeat 31]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from signoff.agents import Agent, AgentConfig
from signoff.clock import SystemClock
from signoff.engine import Engine, Finished
from signoff.gate import RuleSet
from signoff.messages import ModelRequest, ModelResponse, ToolCall
from signoff.models.scripted import ScriptedModel
from signoff.tools import tool


@tool(safe=True)
def lookup(i: int) -> dict[str, Any]:
    """Look a number up."""
    return {"id": i, "status": "ok", "value": 2 * i}


AGENT = Agent(
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=31)
    args = parser.parse_args()
    engine = Engine(agent=AGENT, model=script(0), clock=SystemClock())
    for _ in range(3):  # warm up imports, pydantic validators and the thread pool
        run_once(engine, 20)
    figures = {n: per_step_us(engine, n, args.repeat) for n in (20, 100)}
    print(
        f"engine overhead per tool-calling step: N=20 {figures[20]:.1f} us, "
        f"N=100 {figures[100]:.1f} us (target <= 100 us, flat in N)"
    )


if __name__ == "__main__":
    main()
