"""Builds the notifier and the sweeper from the environment, once per cold start."""

from __future__ import annotations

import os
from pathlib import Path

from signoff.agents import AgentCatalog
from signoff.aws.channels import deployment_secrets
from signoff.clock import SystemClock
from signoff.durable.turns import Turns
from signoff.models.factory import build_model
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier
from signoff.notify.sweeper import Sweeper
from signoff.queue.sqs import SqsQueue
from signoff.store.dynamodb import DynamoStore
from signoff.tokens import signer_from

__all__ = ["notifier_from_env", "sweeper_from_env"]

DAY = 86400.0


def _agents() -> AgentCatalog:
    return AgentCatalog(Path(os.environ.get("SIGNOFF_AGENTS_DIR", "/opt")))


def notifier_from_env() -> Notifier:
    """The notifier of the deployment the template describes."""
    import httpx

    from signoff.channels.registry import build_channels

    clock = SystemClock()
    store = DynamoStore.from_env(clock=clock)
    channels_config = _agents().channels
    secrets = deployment_secrets(channels_config)
    # Webhook targets must not bounce a signed request somewhere else.
    http = httpx.Client(timeout=10.0, follow_redirects=False)
    public_url = os.environ.get("SIGNOFF_PUBLIC_URL", "")
    signer = None

    def composer() -> Composer:
        nonlocal signer
        signer = signer or signer_from(secrets)
        return Composer(signer=signer, public_url=public_url)

    return Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels=build_channels(channels_config, secrets, http=http, clock=clock),
        composer=composer,
        clock=clock,
    )


def sweeper_from_env() -> Sweeper:
    """The sweeper of the deployment the template describes."""
    clock = SystemClock()
    store = DynamoStore.from_env(clock=clock)
    queue = SqsQueue.from_env()
    retention = float(os.environ.get("SIGNOFF_RETENTION_DAYS", "30")) * DAY
    turns = Turns(
        catalog=_agents(),
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
