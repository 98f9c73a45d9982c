"""The sweeper function's part of the sweep on Lambda: every minute, the plan onto the queue.

Planning needs the shard count and the sweep queue, nothing of the store, the
agents or the turns, so the scheduled function loads only this (and the sweep
workers, ``signoff.aws.sweeper``, everything else). Without a sweep queue
(``SIGNOFF_SWEEP_QUEUE_URL`` unset: a template before the sweep queue, a test) the
function runs every task itself and builds the whole sweeper for it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Final

from signoff.aws.snapstart import prime_before_snapshot
from signoff.durable.sweep_plan import task_bodies
from signoff.queue.sqs import SqsQueue
from signoff.settings import Deployment
from signoff.telemetry import logger

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.durable.sweeper import Sweeper
    from signoff.queue.base import BatchQueue

__all__ = [
    "SAFETY_MARGIN",
    "plan_sweep",
    "scheduled_sweep",
    "sweep_here",
    "sweep_queue_from_env",
]

# Seconds kept back from an invocation's time, so a re-driven turn checkpoints first.
SAFETY_MARGIN: Final = 10.0


def scheduled_sweep(deployment: Deployment | None = None) -> Callable[[float], dict[str, Any]]:
    """What the sweeper function does each minute, given its invocation's deadline (monotonic).

    With a sweep queue: plan onto it. Without one, every task runs here: only then is
    the whole sweeper (the store, the agents, the turns) built.
    """
    settings = deployment or Deployment.from_env()
    queue = sweep_queue_from_env(settings)
    if queue is not None:
        prime_before_snapshot()  # its queue's client, built before a SnapStart snapshot
        return lambda deadline: plan_sweep(settings.sweep_shards, queue)
    from signoff.aws.sweeper import sweeper_from_env

    sweeper = sweeper_from_env(settings)
    return lambda deadline: sweep_here(sweeper, deadline=deadline)


def sweep_queue_from_env(deployment: Deployment | None = None) -> SqsQueue | None:
    """The queue the sweep's tasks go to (``SIGNOFF_SWEEP_QUEUE_URL``); None when unset."""
    from signoff.awsclients import lazy_client

    url = (deployment or Deployment.from_env()).sweep_queue_url
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
