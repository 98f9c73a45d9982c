"""The sweep on Lambda: the sweep workers run its tasks (``signoff.aws.sweep_schedule`` plans).

The sweeper function sends one message per task of the plan (one per job and
shard) to the sweep queue, ten to a request. The sweep worker function takes SQS
batches of those tasks: each record is one ``SweepTask`` run until the
invocation's deadline, every record of a batch at once, so a task with much to
do never holds the others of its batch back; a record that is no task, or whose
run raised, is a failed item (Powertools' ``BatchProcessor``), which alone goes
back to the queue and, after its last receive, to the dead-letter queue.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)

from signoff.aws.snapstart import prime_before_snapshot, renew_after_restore
from signoff.aws.turns import checked_agents, turns_from_env
from signoff.clock import SystemClock
from signoff.durable.sweeper import Sweeper, SweepTask
from signoff.errors import SignoffError
from signoff.queue.sqs import SqsQueue
from signoff.settings import Deployment
from signoff.store.dynamodb import DynamoStore
from signoff.store.migrate import migrator_for
from signoff.telemetry import logger

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    from signoff.agents import AgentCatalog
    from signoff.clock import Clock
    from signoff.durable.sweeper import SweepReport

__all__ = ["report_counts", "run_task_batch", "sweeper_from_env"]

# The sweep queue's BatchSize: every record of a batch runs at once (see the module).
_POOL = ThreadPoolExecutor(max_workers=10, thread_name_prefix="sweep")


def sweeper_from_env(deployment: Deployment | None = None, clock: Clock | None = None) -> Sweeper:
    """The sweeper of the deployment the template describes (read here when not given).

    ``clock``: the system's unless given; the local stack's ``/_local/sweep`` gives one a
    test moves ahead, so an escalation ladder's hours pass in a test's seconds.
    """
    settings = deployment or Deployment.from_env()
    clock = clock or SystemClock()
    store = DynamoStore.from_env(clock=clock, deployment=settings)
    queue = SqsQueue.from_env(settings)
    agents = checked_agents(settings)
    turns = turns_from_env(settings, agents=agents, store=store, queue=queue, clock=clock)
    # Under SnapStart each restored environment re-drives turns under an owner id of its own.
    renew_after_restore(turns)
    prime_before_snapshot(agents)
    return Sweeper(
        turns=turns,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=queue,
        clock=clock,
        shards=store.shards.sweep,
        migrator=migrator_for(store, remind_after=lambda name: remind_after(agents, name)),
    )


def remind_after(agents: AgentCatalog, name: str) -> float | None:
    """An agent's ``remindAfter`` for items paused before they recorded it (None: none,
    or the agent is gone)."""
    try:
        return agents.get(name).config.remind_after
    except SignoffError:
        return None


def run_task_batch(
    sweeper: Sweeper, event: dict[str, Any], context: Any, *, deadline: float
) -> dict[str, Any]:
    """Run every task of the SQS batch ``event`` until ``deadline`` (monotonic), all at once.

    The answer is Lambda's partial batch response: ``batchItemFailures`` lists the
    records that were no task or whose run raised.
    """
    started: dict[str, Future[SweepReport]] = {}
    for record in event.get("Records", []):
        started[record["messageId"]] = _POOL.submit(_run, sweeper, record["body"], deadline)

    def record_handler(record: SQSRecord) -> None:
        started[record.message_id].result()  # re-raises what the run raised

    # A batch that failed as a whole is reported record by record too, so the
    # retry and DLQ accounting is the same for one failure or ten.
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    result = process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
    return dict(result)


def _run(sweeper: Sweeper, body: str, deadline: float) -> SweepReport:
    """One record's task, run; a line in the log when it did something or failed.

    Raises:
        pydantic.ValidationError: the body is no ``SweepTask``.
        SignoffError: the task's run failed (a store unavailable, …).
    """
    try:
        task = SweepTask.model_validate_json(body)
    except ValueError:
        # Not the body: a wrong one could quote anything.
        logger.warning("sweep task failed", extra={"reason": "the record is no sweep task"})
        raise
    where = {"job": task.job, "shard": task.shard}
    try:
        report = sweeper.run(task, deadline=deadline)
    except Exception as exc:
        logger.warning("sweep task failed", extra={**where, "reason": type(exc).__name__})
        raise
    counts = report_counts(report)
    if any(counts.values()):
        logger.info("sweep task done", extra={**where, **counts})
    return report


def report_counts(report: SweepReport) -> dict[str, int]:
    """How many of each thing a sweep (or one of its tasks) did: no ids, which the log
    and the function's answer need not carry."""
    return {name: len(values) for name, values in dataclasses.asdict(report).items()}
