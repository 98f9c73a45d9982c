"""Does a step's checkpoint grow with the session? Bytes and write calls per step.

A session of 200 steps of the engine benchmark's workload (a scripted model asks
for the safe tool ``lookup(i)`` once per step) runs on the DynamoDB adapter
against moto, with the table created from template.yaml. Every write request
the DynamoDB client sends is counted and attributed to the step it belongs to.
Printed: bytes written and write calls of steps 1, 10, 100 and 200, the ratio
bytes(step 200) / bytes(step 1) — target <= 1.5, i.e. flat — and the time to
resume a turn paused after 100 steps on the in-memory store (target <= 5 ms):
the median over fresh processes of each one's median of 15 resumes, with the
range, because the same code reads up to twice as long in one process as in
the next.

    python bench/checkpoint_growth.py [--processes 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from signoff.agents import Agent, AgentConfig
from signoff.approver.actors import api_caller
from signoff.clock import SystemClock
from signoff.durable.turns import Turns
from signoff.gate import RuleSet
from signoff.messages import ModelRequest, ModelResponse, ToolCall
from signoff.models.scripted import ScriptedModel
from signoff.queue.memory import MemoryQueue
from signoff.store.memory import MemoryStore
from signoff.tools import tool

WRITES = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}
STEPS = 200
# who approves: an API caller of the bench's tenant
BENCH = api_caller("bench", "t")


@tool(safe=True)
def lookup(i: int) -> dict[str, Any]:
    """Look a number up."""
    return {"id": i, "status": "ok", "value": 2 * i}


@tool
def approve_me(note: str) -> str:
    """Needs a human."""
    return note


def agent() -> Agent:
    return Agent(
        name="bench",
        directory=Path("."),
        config=AgentConfig.model_validate(
            {"system": "Benchmark agent.", "maxTurns": 250, "budget": {"tokens": 10_000_000}}
        ),
        tools={"lookup": lookup, "approve_me": approve_me},
        rules=RuleSet.model_validate(
            {
                "default_decision": "allow",
                "rules": [{"name": "ask", "scope": "*/*", "tool": "approve_me", "decision": "ask"}],
            }
        ),
        skills={},
    )


class Script:
    """lookup(0) … lookup(steps - 1), then optionally one call that needs approval."""

    def __init__(self, steps: int, *, ask_at_end: bool = False) -> None:
        self.steps = steps
        self.ask_at_end = ask_at_end
        self.calls = 0

    def __call__(self, request: ModelRequest) -> ModelResponse:
        step = self.calls
        self.calls += 1
        if step < self.steps:
            call = ToolCall(id=f"call_{step}", name="lookup", args={"i": step})
            return ModelResponse(tool_calls=(call,), stop="tool_use")
        if step == self.steps and self.ask_at_end:
            call = ToolCall(id="call_ask", name="approve_me", args={"note": "ok"})
            return ModelResponse(tool_calls=(call,), stop="tool_use")
        return ModelResponse(text="finished")


def turns(store: Any, script: Script) -> Turns:
    bench = agent()
    return Turns(
        catalog=_One(bench),
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=MemoryQueue(),
        clock=SystemClock(),
        model_for=lambda _agent: ScriptedModel(script),
    )


class _One:
    def __init__(self, only: Agent) -> None:
        self.only = only

    def get(self, name: str) -> Agent:
        return self.only


def growth_on_dynamodb() -> dict[int, tuple[int, int]]:
    """{step: (bytes, write calls)} for a 200-step session."""
    import boto3
    from moto import mock_aws

    from signoff.store.dynamodb import DynamoStore
    from signoff.store.s3 import S3Blobs
    from tests.support.aws import create_resources

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        os.environ[name] = "testing"
    os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
    with mock_aws():
        resources = create_resources()
        client = boto3.client("dynamodb")
        store = DynamoStore(
            client,
            resources.environment["SIGNOFF_TABLE"],
            S3Blobs(resources.environment["SIGNOFF_BUCKET"], boto3.client("s3")),
        )
        script = Script(STEPS)
        per_step: dict[int, list[int]] = {}

        def count(request: Any, **_: Any) -> None:
            operation = request.headers.get("X-Amz-Target", b"")
            if isinstance(operation, bytes):
                operation = operation.decode()
            if operation.rsplit(".", 1)[-1] in WRITES:
                tally = per_step.setdefault(script.calls, [0, 0])
                tally[0] += len(request.body or b"")
                tally[1] += 1

        client.meta.events.register("before-send.dynamodb", count)
        result = turns(store, script).send("bench", "go", tenant="t", environment="e")
        assert result.status == "finished", result
        # Writes after model call k (and before call k + 1) are step k's.
        return {step: (per_step[step][0], per_step[step][1]) for step in (1, 10, 100, 200)}


def resume_time_in_memory(repeat: int = 15) -> float:
    """Median seconds to resolve and resume a turn paused after 100 steps."""
    timings = []
    for _ in range(repeat):
        store = MemoryStore()
        service = turns(store, Script(100, ask_at_end=True))
        paused = service.send("bench", "go", tenant="t", environment="e")
        assert paused.pending is not None
        resumer = turns(store, Script(0))  # a fresh process: nothing cached
        started = time.perf_counter()
        done = resumer.resolve(paused.pending.id, decision="approve", actor=BENCH)
        timings.append(time.perf_counter() - started)
        assert done.status == "finished"
    return statistics.median(timings)


def resume_ms_in_fresh_processes(processes: int) -> list[float]:
    """Each fresh process's median resume time, in ms."""
    command = [sys.executable, __file__, "--resume-only"]
    return [float(subprocess.check_output(command, text=True)) for _ in range(processes)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--processes", type=int, default=7, help="fresh processes to resume in")
    parser.add_argument("--resume-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.resume_only:
        print(f"{resume_time_in_memory() * 1000:.3f}")
        return
    if args.processes < 1:
        parser.error("--processes must be at least 1")
    growth = growth_on_dynamodb()
    for step, (size, calls) in growth.items():
        print(f"step {step:>3}: {size:>6} bytes in {calls} write call(s)")
    ratio = growth[200][0] / growth[1][0]
    print(f"bytes ratio step 200 / step 1: {ratio:.2f} (target <= 1.5)")
    resumes = resume_ms_in_fresh_processes(args.processes)
    print(
        f"resume after 100 steps (in-memory store): {statistics.median(resumes):.2f} ms, "
        f"median of {len(resumes)} fresh processes ({min(resumes):.2f} to {max(resumes):.2f} ms; "
        "target <= 5 ms)"
    )


if __name__ == "__main__":
    main()
