"""Builds the sweeper from the environment, once per cold start."""

from __future__ import annotations

from signoff.aws.turns import checked_agents, turns_from_env
from signoff.clock import SystemClock
from signoff.durable.sweeper import Sweeper
from signoff.queue.sqs import SqsQueue
from signoff.settings import Deployment
from signoff.store.dynamodb import DynamoStore

__all__ = ["sweeper_from_env"]


def sweeper_from_env(deployment: Deployment | None = None) -> Sweeper:
    """The sweeper of the deployment the template describes (read here when not given)."""
    settings = deployment or Deployment.from_env()
    clock = SystemClock()
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
