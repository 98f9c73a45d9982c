"""Builds the sweeper from the environment, once per cold start."""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.aws.turns import checked_agents, turns_from_env
from signoff.clock import SystemClock
from signoff.durable.sweeper import Sweeper
from signoff.queue.sqs import SqsQueue
from signoff.settings import Deployment
from signoff.store.dynamodb import DynamoStore

if TYPE_CHECKING:
    from signoff.clock import Clock

__all__ = ["sweeper_from_env"]


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
    return Sweeper(
        turns=turns_from_env(settings, agents=agents, store=store, queue=queue, clock=clock),
        pending=store.pending,
        outbox=store.outbox,
        queue=queue,
        clock=clock,
    )
