"""Builds the notifier and the sweeper from the environment, once per cold start."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from signoff.agents import AgentCatalog
from signoff.clock import SystemClock
from signoff.durable.turns import Turns
from signoff.models.factory import build_model
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier
from signoff.notify.sweeper import Sweeper
from signoff.queue.sqs import SqsQueue
from signoff.store.dynamodb import DynamoStore
from signoff.tokens import RESUME_SIGNING_SECRET, signer_from

if TYPE_CHECKING:
    from signoff.channels.config import ChannelsConfig
    from signoff.secrets.aws import SecretsManagerSecrets

__all__ = ["channel_secret_names", "notifier_from_env", "sweeper_from_env"]

DAY = 86400.0


def channel_secret_names(config: ChannelsConfig) -> list[str]:
    """Every ``{secret: name}`` the channels refer to."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if set(value) == {"secret"} and isinstance(value["secret"], str):
                found.add(value["secret"])
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(config.model_dump())
    return sorted(found)


def _secrets(names: list[str]) -> SecretsManagerSecrets:
    """Secret ids from ``SIGNOFF_<NAME>_SECRET_ARN``, else ``<prefix><name>`` (``signoff/``)."""
    from aws_lambda_powertools.utilities.parameters import SecretsProvider

    from signoff.secrets.aws import SecretsManagerSecrets, secret_id_variable

    prefix = os.environ.get("SIGNOFF_CHANNEL_SECRETS_PREFIX", "signoff/")
    ids = {name: os.environ.get(secret_id_variable(name)) or f"{prefix}{name}" for name in names}
    return SecretsManagerSecrets(ids, SecretsProvider())


def _agents() -> AgentCatalog:
    return AgentCatalog(Path(os.environ.get("SIGNOFF_AGENTS_DIR", "/opt")))


def notifier_from_env() -> Notifier:
    """The notifier of the deployment the template describes."""
    import httpx

    from signoff.channels.registry import build_channels

    clock = SystemClock()
    store = DynamoStore.from_env(clock=clock)
    channels_config = _agents().channels
    secrets = _secrets([RESUME_SIGNING_SECRET, *channel_secret_names(channels_config)])
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
