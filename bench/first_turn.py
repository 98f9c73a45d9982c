"""A fresh process's first turn, for ``bench/engine_overhead.py``.

Run as a script, this is one fresh process: it imports what a message's turn
needs, builds ``engine_overhead``'s agent, wires ``Turns`` over the in-memory
store (the store every checkpoint of the turn is written to, as a deployed turn
writes DynamoDB) and runs two one-step turns on new sessions, printing each
phase's milliseconds as one JSON line. Whatever a first turn builds lazily
(pydantic's deferred validators and serializers, a tool's JSON schema, the
engine itself) is in ``first``; ``second`` is the same turn once it is built.
With ``--primed`` the process first runs what SnapStart runs before its snapshot
(``signoff.aws.snapstart.prime``, timed as ``priming``): the first turn of an
environment restored from one.

The processes run on the functions' runtime when ``make packaging`` has made it
(``.venv-lambda``'s python3.13, the built layer's libraries, this checkout's
``signoff`` first on the path), else on this interpreter; ``line`` names which.

    python bench/first_turn.py [--primed]   # one process's figures, JSON
    python bench/first_turn.py --profile 30  # cProfile of its first turn instead
"""

from __future__ import annotations

import json
import os
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
# each phase runs from one mark to the next: import, build, wire, prime, turn, turn again
PHASES = ("import", "agent", "wiring", "priming", "first", "second")
TARGET_MS = 5.0
LAMBDA_PYTHON = ROOT / ".venv-lambda" / "bin" / "python"
BUILT_LIBRARIES = ROOT / ".aws-sam" / "build" / "EngineLayer" / "python"


class _One:
    """The catalog of one agent (``AgentSource``; ``snapstart.Agents`` for its priming)."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def get(self, name: str) -> Agent:
        return self.agent

    def names(self) -> list[str]:
        return ["bench"]

    def problems(self) -> dict[str, object]:
        return {}


def _fresh(profile_top: int = 0, *, primed: bool = False) -> dict[str, float] | str:
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
    catalog = _One(agent)
    turns = Turns(
        catalog=catalog,
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=MemoryQueue(),
        clock=clock,
        model_for=lambda _agent: model,
    )
    wired = time.perf_counter()
    if primed:
        from signoff.aws.snapstart import prime

        prime([catalog])
    ready = time.perf_counter()

    def turn() -> None:
        result = turns.send("bench", "go", tenant="default", environment="production")
        assert result.status == "finished" and result.text == "looked it up", result

    if profile_top:
        return _profiled(turn, profile_top)
    turn()
    first = time.perf_counter()
    turn()
    second = time.perf_counter()
    marks = (started, imported, built, wired, ready, first, second)
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


def runtime() -> tuple[list[str], dict[str, str], str]:
    """The command, environment and name of the interpreter the fresh processes run on."""
    if LAMBDA_PYTHON.exists() and BUILT_LIBRARIES.is_dir():
        path = os.pathsep.join(map(str, (ROOT / "layers" / "signoff", BUILT_LIBRARIES, ROOT)))
        env = {**os.environ, "PYTHONPATH": path}
        return [str(LAMBDA_PYTHON), "-s"], env, "the functions' python3.13"
    version = ".".join(map(str, sys.version_info[:2]))
    return [sys.executable], dict(os.environ), f"python{version} (no .venv-lambda)"


def _spawn(*args: str) -> str:
    command, env, _ = runtime()
    done = subprocess.run(
        [*command, str(Path(__file__)), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env,
    )
    return done.stdout.strip().splitlines()[-1] if args[:1] != ("--profile",) else done.stdout


def medians(runs: int) -> tuple[dict[str, float], dict[str, float]]:
    """Each phase's median over ``runs`` fresh processes, and over ``runs`` primed ones
    (the two kinds alternate)."""
    plain: list[dict[str, float]] = []
    primed: list[dict[str, float]] = []
    for _ in range(runs):
        plain.append(json.loads(_spawn()))
        primed.append(json.loads(_spawn("--primed")))
    return _medians(plain), _medians(primed)


def _medians(samples: list[dict[str, float]]) -> dict[str, float]:
    return {phase: statistics.median(s[phase] for s in samples) for phase in PHASES}


def profile(top: int) -> str:
    """cProfile's top ``top`` functions (cumulative, then own time) of a fresh first turn."""
    return _spawn("--profile", str(top))


def line(figures: tuple[dict[str, float], dict[str, float]]) -> str:
    plain, primed = figures
    return (
        f"fresh process on {runtime()[2]}: first one-step turn {plain['first']:.1f} ms after"
        f" import (second turn {plain['second']:.1f} ms), building the agent"
        f" {plain['agent']:.1f} ms (import {plain['import']:.0f} ms); restored from a"
        f" SnapStart snapshot (primed in {primed['priming']:.0f} ms before it):"
        f" first turn {primed['first']:.1f} ms; target < {TARGET_MS:.0f} ms"
    )


def main(argv: list[str]) -> None:
    sys.path.insert(0, str(ROOT))
    top = int(argv[1]) if argv[:1] == ["--profile"] else 0
    result: Any = _fresh(top, primed=argv[:1] == ["--primed"])
    print(result if isinstance(result, str) else json.dumps(result), end="")


if __name__ == "__main__":
    main(sys.argv[1:])
