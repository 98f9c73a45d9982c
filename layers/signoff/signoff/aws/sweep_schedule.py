"""The sweeper function's part of the sweep on Lambda: every minute, the plan onto the queue.

Planning needs the shard count and the sweep queue, nothing of the store, the
agents or the turns, so the scheduled function loads only this (and the sweep
workers, ``signoff.aws.sweeper``, everything else): it reads its two variables
with ``SweepPlanning``, so its cold start imports no pydantic. Without a sweep queue
(``SIGNOFF_SWEEP_QUEUE_URL`` unset: a template before the sweep queue, a test) the
function runs every task itself and builds the whole sweeper for it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Final

from signoff.aws.snapstart import prime_before_snapshot
from signoff.awsclients import lazy_client
from signoff.durable.sweep_plan import task_bodies
from signoff.queue.sqs import SqsQueue
from signoff.settings.variables import SweepPlanning
from signoff.telemetry import logger

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.durable.sweeper import Sweeper
    from signoff.queue.base import BatchQueue
    from signoff.settings import Deployment

__all__ = [
    "SAFETY_MARGIN",
    "plan_sweep",
    "scheduled_sweep",
    "sweep_here",
    "sweep_queue",
]

# Seconds kept back from an invocation's time, so a re-driven turn checkpoints first.
SAFETY_MARGIN: Final = 10.0


def scheduled_sweep(deployment: Deployment | None = None) -> Callable[[float], dict[str, Any]]:
    """What the sweeper function does each minute, given its invocation's deadline (monotonic).

    With a sweep queue: plan onto it. Without one, every task runs here: only then is
    the whole sweeper (the store, the agents, the turns) built, and every variable read.

    Raises:
        UsageError: a variable it reads is invalid, or (without a sweep queue) one the
            whole sweeper needs is missing; the message names it.
    """
    planning = (
        SweepPlanning.from_env()
        if deployment is None
        else SweepPlanning(deployment.sweep_queue_url, deployment.sweep_shards)
    )
    queue = sweep_queue(planning)
    if queue is not None:
        prime_before_snapshot()  # its queue's client, built before a SnapStart snapshot
        return lambda deadline: plan_sweep(planning.shards, queue)
    from signoff.aws.sweeper import sweeper_from_env
    from signoff.settings import Deployment

    sweeper = sweeper_from_env(deployment or Deployment.from_env())
    return lambda deadline: sweep_here(sweeper, deadline=deadline)


def sweep_queue(planning: SweepPlanning) -> SqsQueue | None:
    """The queue the sweep's tasks go to (``SIGNOFF_SWEEP_QUEUE_URL``); None when unset."""
    url = planning.queue_url
    return None if url is None else SqsQueue(url, lazy_client("sqs"))


def plan_sweep(shards: int, queue: BatchQueue) -> dict[str, Any]:
    """Send one sweep's tasks over ``shards`` shards to ``queue``; the answer counts them.

    The legacy keys' move is always among them: a deployed sweep migrates what an
    earlier release wrote (``signoff.store.migrate``), and finds nothing once done.

    Raises:
        StoreUnavailable: the queue did not take every task (those it took run; the
            next minute's plan sends every task again).
    """
    bodies = task_bodies(shards, legacy=True)
    queue.send_batch(bodies)
    return {"planned": len(bodies)}


def sweep_here(sweeper: Sweeper, *, deadline: float | None = None) -> dict[str, Any]:
    """Every task run here, in turn, until ``deadline`` (monotonic): what the sweep did, by id."""
    logger.info("no sweep queue (SIGNOFF_SWEEP_QUEUE_URL): every task runs here")
    return dataclasses.asdict(sweeper.sweep(deadline=deadline))
