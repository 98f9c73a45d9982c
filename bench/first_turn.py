"""A fresh process's first turn, for ``bench/engine_overhead.py``.

Run as a script, this is one fresh process: it imports what a message's turn
needs, builds ``engine_overhead``'s agent, wires ``Turns`` over the in-memory
store (the store every checkpoint of the turn is written to, as a deployed turn
writes DynamoDB) and runs two one-step turns on new sessions, printing each
phase's milliseconds as one JSON line. Whatever a first turn builds lazily
(pydantic's deferred validators and serializers, a tool's JSON schema, the
engine itself) is in ``first``; ``second`` is the same turn once it is built.

    python bench/first_turn.py             # one process's figures, JSON
    python bench/first_turn.py --profile 30  # cProfile of its first turn instead
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.agents import Agent

ROOT = Path(__file__).resolve().parents[1]
# each phase runs from one mark to the next: import, build, wire, turn, turn again
PHASES = ("import", "agent", "wiring", "first", "second")
TARGET_MS = 5.0


class _One:
    """The catalog of one agent (``AgentSource``)."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def get(self, name: str) -> Agent:
        return self.agent


def _fresh(profile_top: int = 0) -> dict[str, float] | str:
    """This process's phases in ms, or (``profile_top``) the profile of its first turn."""
    started = time.perf_counter()
    # What a message function has imported before its first turn, and the workload.
    from bench.engine_overhead import build_agent, one_step
    from signoff.clock import SystemClock
    from signoff.durable.turns import Turns
    from signoff.queue.memory import MemoryQueue
    from signoff.store.memory import MemoryStore

    imported = time.perf_counter()
    agent = build_agent()
    built = time.perf_counter()
    clock = SystemClock()
    store = MemoryStore(clock=clock)
    model = one_step()
    turns = Turns(
        catalog=_One(agent),
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=MemoryQueue(),
        clock=clock,
        model_for=lambda _agent: model,
    )
    wired = time.perf_counter()

    def turn() -> None:
        result = turns.send("bench", "go", tenant="default", environment="production")
        assert result.status == "finished" and result.text == "looked it up", result

    if profile_top:
        return _profiled(turn, profile_top)
    turn()
    first = time.perf_counter()
    turn()
    second = time.perf_counter()
    marks = (started, imported, built, wired, first, second)
    # wiring (stores, Turns) is what a function does once at import, after it
    spans = zip(PHASES, pairwise(marks), strict=True)
    return {phase: (end - begin) * 1e3 for phase, (begin, end) in spans}


def _profiled(turn: Callable[[], None], top: int) -> str:
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(turn)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def _spawn(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(Path(__file__)), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout


def medians(runs: int) -> dict[str, float]:
    """Each phase's median over ``runs`` fresh processes, run one after another."""
    samples = [json.loads(_spawn()) for _ in range(runs)]
    return {phase: statistics.median(s[phase] for s in samples) for phase in PHASES}


def profile(top: int) -> str:
    """cProfile's top ``top`` functions (cumulative, then own time) of a fresh first turn."""
    return _spawn("--profile", str(top))


def line(figures: dict[str, float]) -> str:
    return (
        f"fresh process: first one-step turn {figures['first']:.1f} ms after import "
        f"(second turn {figures['second']:.1f} ms), building the agent "
        f"{figures['agent']:.1f} ms (import {figures['import']:.0f} ms); "
        f"target < {TARGET_MS:.0f} ms"
    )


def main(argv: list[str]) -> None:
    sys.path.insert(0, str(ROOT))
    top = int(argv[1]) if argv[:1] == ["--profile"] else 0
    result: Any = _fresh(top)
    print(result if isinstance(result, str) else json.dumps(result), end="")


if __name__ == "__main__":
    main(sys.argv[1:])
