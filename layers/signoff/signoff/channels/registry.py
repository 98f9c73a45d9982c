"""Builds the deployment's channels from ``channels.yaml``, by type.

Webhook and email are built here; Slack, Lark, Redis and the database are
imported only when a channel of that type is defined, so a deployment without
them loads neither their modules nor their client libraries. Each adapter gets
its own settings model from the ``channels.yaml`` one: secrets are passed as
names, to be read from ``secrets``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, assert_never

import httpx

from signoff.channels.config import (
    DatabaseSettings,
    EmailSettings,
    LarkSettings,
    RedisSettings,
    SlackSettings,
    WebhookSettings,
)
from signoff.channels.email import EmailChannel
from signoff.channels.webhook import WebhookChannel

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.channels.base import Channel
    from signoff.channels.config import ChannelsConfig, ChannelSettings
    from signoff.clock import Clock
    from signoff.secrets.base import SecretSource

__all__ = ["HTTP_TIMEOUT", "build_channels", "default_http_client"]

# Seconds for one request to a channel's service; a slower one is retried later
# from the queue rather than holding the notifier's batch.
HTTP_TIMEOUT: Final = 10.0


def default_http_client() -> httpx.Client:
    """The client HTTP channels share when none is injected: bounded, never following redirects."""
    return httpx.Client(timeout=httpx.Timeout(HTTP_TIMEOUT, connect=5.0), follow_redirects=False)


def build_channels(
    config: ChannelsConfig,
    secrets: SecretSource,
    *,
    http: httpx.Client | None = None,
    clock: Clock,
    environment: str | None = None,
) -> dict[str, Channel]:
    """Every channel of ``config`` by name; ``environment`` scopes redis/database rows.

    Raises:
        SecretMissing: a channel that reads its secret when built (Slack, Lark,
            Redis, database) found none.
        StoreUnavailable: the secret source failed transiently.
    """
    shared: list[httpx.Client] = [http] if http is not None else []

    def client() -> httpx.Client:
        # Built only when an HTTP channel is defined; shared by all of them.
        if not shared:
            shared.append(default_http_client())
        return shared[0]

    return {
        name: _build(name, settings, secrets, client, clock, environment)
        for name, settings in config.channels.items()
    }


def _build(
    name: str,
    settings: ChannelSettings,
    secrets: SecretSource,
    http: Callable[[], httpx.Client],
    clock: Clock,
    environment: str | None,
) -> Channel:
    match settings:
        case WebhookSettings():
            return WebhookChannel.from_config(settings, secrets, http(), name=name, clock=clock)
        case EmailSettings():
            return EmailChannel.from_config(settings, secrets, name=name)
        case SlackSettings():
            from signoff.channels.slack import SlackChannel

            return SlackChannel.from_config(settings, secrets, http(), name=name)
        case LarkSettings():
            from signoff.channels.lark import LarkChannel

            return LarkChannel.from_config(settings, secrets, http(), clock=clock, name=name)
        case RedisSettings():
            from signoff.channels.redis import RedisChannel

            return RedisChannel.from_config(
                settings, secrets, name=name, environment=environment, clock=clock
            )
        case DatabaseSettings():
            from signoff.channels.database import DatabaseChannel

            return DatabaseChannel.from_config(
                settings, secrets, name=name, environment=environment, clock=clock
            )
        case _:
            assert_never(settings)
