"""A deployment's durable turn runner, as the message, resolve and sweeper functions build it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.durable.turns import Turns
from signoff.models.factory import build_model

if TYPE_CHECKING:
    from signoff.agents import AgentCatalog
    from signoff.clock import Clock
    from signoff.queue.base import Queue
    from signoff.settings import Deployment
    from signoff.store.dynamodb import DynamoStore

__all__ = ["turns_from_env"]


def turns_from_env(
    deployment: Deployment, *, agents: AgentCatalog, store: DynamoStore, queue: Queue, clock: Clock
) -> Turns:
    """Turns on the deployment's table, keeping sessions ``SIGNOFF_RETENTION_DAYS`` days."""
    return Turns(
        catalog=agents,
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=queue,
        clock=clock,
        model_for=lambda agent: build_model(agent.config.model, agent.directory, deployment),
        retention=deployment.retention_seconds,
    )
