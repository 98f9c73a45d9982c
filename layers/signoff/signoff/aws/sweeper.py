"""Builds the sweeper from the environment, once per cold start."""

from __future__ import annotations

import os
from pathlib import Path

from signoff.agents import AgentCatalog
from signoff.clock import SystemClock
from signoff.durable.turns import Turns
from signoff.models.factory import build_model
from signoff.notify.sweeper import Sweeper
from signoff.queue.sqs import SqsQueue
from signoff.store.dynamodb import DynamoStore

__all__ = ["sweeper_from_env"]

DAY = 86400.0


def sweeper_from_env() -> Sweeper:
    """The sweeper of the deployment the template describes."""
    clock = SystemClock()
    store = DynamoStore.from_env(clock=clock)
    queue = SqsQueue.from_env()
    retention = float(os.environ.get("SIGNOFF_RETENTION_DAYS", "30")) * DAY
    turns = Turns(
        catalog=AgentCatalog(Path(os.environ.get("SIGNOFF_AGENTS_DIR", "/opt"))),
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=queue,
        clock=clock,
        model_for=lambda agent: build_model(agent.config.model, agent.directory),
        retention=retention,
    )
    return Sweeper(
        turns=turns,
        pending=store.pending,
        outbox=store.outbox,
        audit=store.audit,
        queue=queue,
        clock=clock,
    )
