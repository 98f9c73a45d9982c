"""The sweep's Lambda wiring (``signoff.aws.sweep_schedule``, ``signoff.aws.sweeper``): a
plan onto a queue, or run here without one; a batch of tasks run at once, each failure
reported alone."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from signoff.aws.sweep_schedule import plan_sweep, scheduled_sweep, sweep_here
from signoff.aws.sweeper import run_task_batch
from signoff.durable.sweep_plan import JOBS, task_bodies
from signoff.durable.sweeper import SweepReport, SweepTask
from signoff.errors import StoreUnavailable
from signoff.queue.memory import MemoryQueue
from signoff.settings import Deployment
from tests.support.lambdas import FakeLambdaContext

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass
class ScriptedSweeper:
    """A sweeper whose ``run`` is ``script(task, deadline)``; it records what it ran."""

    script: Callable[[SweepTask, float | None], SweepReport] = lambda task, deadline: SweepReport()
    tasks: list[SweepTask] = field(
        default_factory=lambda: [
            SweepTask(job="legacy"),
            *(SweepTask(job=job, shard=s) for job in ("send", "due") for s in range(3)),
        ]
    )
    ran: list[tuple[SweepTask, float | None]] = field(default_factory=list)

    def plan(self) -> list[SweepTask]:
        return list(self.tasks)

    def run(self, task: SweepTask, *, deadline: float | None = None) -> SweepReport:
        self.ran.append((task, deadline))
        return self.script(task, deadline)

    def sweep(self, *, deadline: float | None = None) -> SweepReport:
        report = SweepReport()
        for task in self.plan():
            report.add(self.run(task, deadline=deadline))
        return report


# What the sweeper function's Deployment needs besides the sweep's own settings.
BASE_ENV = {"SIGNOFF_TABLE": "signoff-table"}
SWEEP_QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/signoff-SweepQueue"


def sqs_batch(*bodies: str) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": f"m{n}",
                "receiptHandle": f"r{n}",
                "body": text,
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:signoff-SweepQueue",
                "awsRegion": "us-east-1",
            }
            for n, text in enumerate(bodies)
        ]
    }


def task(job: str, shard: int = 0) -> str:
    return json.dumps({"job": job, "shard": shard})


# The plan


def test_the_plan_goes_to_the_queue_one_message_per_task_in_its_wire_form() -> None:
    queue = MemoryQueue()

    answer = plan_sweep(3, queue)

    sent = queue.receive(max=20)
    assert answer == {"planned": 13}
    assert sent[0] == {"job": "legacy", "shard": 0}  # the legacy keys' move first
    assert sent[1:] == [{"job": j, "shard": s} for j in JOBS for s in range(3)]
    assert queue.receive(max=20) == []


def test_the_planned_messages_are_the_tasks_a_sweeper_plans_and_a_worker_reads() -> None:
    bodies = task_bodies(4, legacy=True)
    planned = [SweepTask.model_validate_json(json.dumps(body)) for body in bodies]
    sweeper = ScriptedSweeper(tasks=planned)

    answer = run_task_batch(
        sweeper,  # type: ignore[arg-type]
        sqs_batch(*(json.dumps(body) for body in bodies)),
        FakeLambdaContext(),
        deadline=time.monotonic() + 60,
    )

    assert answer == {"batchItemFailures": []}
    assert sorted(ran.model_dump_json() for ran, _ in sweeper.ran) == sorted(
        task.model_dump_json() for task in planned
    )
    assert {task.job for task in planned} == {"legacy", *JOBS}
    assert task_bodies(4, legacy=False) == bodies[1:]


def test_the_scheduled_sweep_only_plans_when_there_is_a_sweep_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_sweeper(*args: Any) -> None:
        raise AssertionError("planning built the sweeper")

    monkeypatch.setattr("signoff.aws.sweeper.sweeper_from_env", no_sweeper)
    deployment = Deployment.from_env(
        {**BASE_ENV, "SIGNOFF_SWEEP_QUEUE_URL": SWEEP_QUEUE_URL, "SIGNOFF_SWEEP_SHARDS": "2"}
    )
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(
        "signoff.queue.sqs.SqsQueue.send_batch", lambda self, bodies: sent.extend(bodies)
    )

    answer = scheduled_sweep(deployment)(time.monotonic() + 60)

    assert answer == {"planned": 9} and len(sent) == 9


def test_without_a_sweep_queue_every_task_runs_here_until_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sweeper = ScriptedSweeper(
        lambda task, deadline: SweepReport(expired=[f"{task.job}{task.shard}"])
    )
    monkeypatch.setattr("signoff.aws.sweeper.sweeper_from_env", lambda deployment: sweeper)

    answer = scheduled_sweep(Deployment.from_env(BASE_ENV))(100.0)

    assert [ran for ran, _ in sweeper.ran] == sweeper.tasks
    assert {deadline for _, deadline in sweeper.ran} == {100.0}
    assert answer["expired"] == ["legacy0", "send0", "send1", "send2", "due0", "due1", "due2"]
    assert sweep_here(sweeper, deadline=5.0)["expired"] == answer["expired"]  # type: ignore[arg-type]


def test_a_plan_the_queue_refuses_fails_the_invocation() -> None:
    class Refusing(MemoryQueue):
        def send_batch(self, bodies: Any) -> None:
            raise StoreUnavailable("SQS took 0 of 7")

    with pytest.raises(StoreUnavailable):
        plan_sweep(1, Refusing())


# The workers' batches


def test_every_task_of_a_batch_runs_until_the_deadline_and_each_failure_is_reported_alone() -> None:
    def script(task: SweepTask, deadline: float | None) -> SweepReport:
        if task.job == "stalled":
            raise StoreUnavailable("throttled")
        return SweepReport(requeued=["p1"])

    sweeper = ScriptedSweeper(script)
    batch = sqs_batch(
        task("send", 2),
        "not json",
        task("stalled", 1),
        '{"job": "due", "shard": 1, "extra": true}',  # no such field: not a task
        '{"job": "everything"}',
        task("legacy"),
    )

    answer = run_task_batch(sweeper, batch, FakeLambdaContext(), deadline=42.0)  # type: ignore[arg-type]

    assert answer == {
        "batchItemFailures": [{"itemIdentifier": m} for m in ("m1", "m2", "m3", "m4")]
    }
    assert sorted((t.job, t.shard, d) for t, d in sweeper.ran) == [
        ("legacy", 0, 42.0),
        ("send", 2, 42.0),
        ("stalled", 1, 42.0),
    ]


def test_the_tasks_of_a_batch_run_at_once_so_a_long_one_holds_no_other_back() -> None:
    # Each task waits until all ten have started: run one after another, they never would
    # (the first one's wait breaks the barrier, and every task fails). The barrier's
    # timeout only bounds how long that failure takes; passing takes no time of it.
    everyone = threading.Barrier(10, timeout=30)

    def script(task: SweepTask, deadline: float | None) -> SweepReport:
        everyone.wait()
        return SweepReport()

    answer = run_task_batch(
        ScriptedSweeper(script),  # type: ignore[arg-type]
        sqs_batch(*(task("due", shard) for shard in range(10))),
        FakeLambdaContext(),
        deadline=time.monotonic() + 60,
    )

    assert answer == {"batchItemFailures": []}
    assert not everyone.broken
