"""The sweep's two functions against moto: the sweeper (events/sweeper_schedule.json) plans
onto the sweep queue, the sweep worker (events/sweep_worker_sqs_batch.json) runs the tasks."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from signoff.clock import SystemClock
from tests.support.lambdas import (
    FakeLambdaContext,
    Lambdas,
    body,
    import_handler,
    load_event,
    sqs_event,
)
from tests.support.lambdas import lambdas as lambdas

if TYPE_CHECKING:
    from types import ModuleType

    import pytest


def drain(worker: ModuleType, url: str) -> list[dict[str, Any]]:
    """Hand the worker every task on the sweep queue, ten at a time, as Lambda's trigger
    would (a record it handled is deleted); the tasks it was handed."""
    import boto3

    sqs = boto3.client("sqs")
    tasks: list[dict[str, Any]] = []
    while (batch := sqs_event(url))["Records"]:
        answer = worker.handler(batch, FakeLambdaContext())
        assert answer == {"batchItemFailures": []}, answer
        for record in batch["Records"]:
            tasks.append(json.loads(record["body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=record["receiptHandle"])
    return tasks


def test_the_sweeper_plans_every_job_and_shard_and_the_workers_expire_an_overdue_approval(
    lambdas: Lambdas, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a turn paused for an approval, and its notification never sent
    paused = body(lambdas.invoke("message", load_event("message_post")))
    assert paused["type"] == "approval", paused
    sweeper, worker = import_handler("sweeper"), import_handler("sweep_worker")
    # Days later: past the approval's expiry and every outbox row's send grace.
    later = datetime.now(UTC) + timedelta(days=2)
    monkeypatch.setattr(SystemClock, "now", lambda self: later)

    # When the sweeper runs on its schedule
    planned = sweeper.handler(load_event("sweeper_schedule"), FakeLambdaContext())

    # Then it did nothing but plan: one task per job and shard, and the legacy keys'
    url = lambdas.resources.queues["SweepQueue"]
    shards = int(lambdas.resources.environment["SIGNOFF_SWEEP_SHARDS"])
    assert planned == {"planned": 4 * shards + 1}
    pending_id = paused["id"]
    assert lambdas.api.pending.get(pending_id).status == "pending"

    # When the workers take the queue's tasks
    tasks = drain(worker, url)

    # Then each task was on the queue once, in its wire form
    assert sorted((t["job"], t["shard"]) for t in tasks) == sorted(
        [(job, shard) for job in ("send", "retry", "due", "stalled") for shard in range(shards)]
        + [("legacy", 0)]
    )
    # And the approval expired, its turn resumed as denied
    item = lambdas.api.pending.get(pending_id)
    assert (item.status, item.resumed) == ("expired", True)
    # And its unsent notification went to the notifier's queue again
    requeued = sqs_event(lambdas.resources.environment["SIGNOFF_NOTIFY_QUEUE_URL"])["Records"]
    assert pending_id in {json.loads(record["body"])["pendingId"] for record in requeued}


def test_a_record_that_is_no_sweep_task_fails_alone(lambdas: Lambdas) -> None:
    # Given the sample batch (two tasks) with a third record that is no task
    worker = import_handler("sweep_worker")
    batch = load_event("sweep_worker_sqs_batch")
    bad = [
        {**batch["Records"][0], "messageId": f"bad-{n}", "body": text}
        for n, text in enumerate(
            ["not json", '{"job": "everything"}', '{"job": "due", "shard": -1}']
        )
    ]
    batch["Records"] += bad

    # When the worker runs it
    answer = worker.handler(batch, FakeLambdaContext())

    # Then only those records are reported failed: the tasks ran
    assert answer == {"batchItemFailures": [{"itemIdentifier": f"bad-{n}"} for n in range(3)]}
