"""The channel types ``channels.yaml`` may use, and building a deployment's channels from them.

One table, ``CHANNEL_TYPES``: a type's name (``type:`` in ``channels.yaml``) →
its channel class and its settings model, both as import paths. Validating
``channels.yaml`` imports the settings model of each type it uses; building
imports the channel class of each type it uses. So a deployment loads the
modules (and client libraries) of the channels it defines and no others.

A channel class is built by ``from_config(settings, context, *, name=...)``
(``ChannelClass``); its settings model subclasses ``ChannelSettings`` with
``type: Literal["<name>"]``. Adding a type is one line here (see
``docs/extending.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from signoff.clock import SystemClock
from signoff.plugins import load

if TYPE_CHECKING:
    import httpx

    from signoff.channels.base import Channel
    from signoff.channels.config import ChannelsConfig, ChannelSettings
    from signoff.clock import Clock
    from signoff.secrets.base import SecretSource

__all__ = [
    "CHANNEL_TYPES",
    "HTTP_TIMEOUT",
    "BuildContext",
    "ChannelClass",
    "ChannelType",
    "build_channel",
    "build_channels",
    "default_http_client",
]

# Seconds for one request to a channel's service; a slower one is retried later
# from the queue rather than holding the notifier's batch.
HTTP_TIMEOUT: Final = 10.0


def default_http_client() -> httpx.Client:
    """The client HTTP channels share when none is injected: bounded, never following redirects."""
    import httpx  # only when an HTTP channel is built

    return httpx.Client(timeout=httpx.Timeout(HTTP_TIMEOUT, connect=5.0), follow_redirects=False)


@dataclass(kw_only=True)
class BuildContext:
    """What building a channel may use besides its settings; one per ``build_channels``.

    ``environment`` scopes the rows of the row and queue channels (redis,
    database). ``http()`` is the HTTP client every HTTP channel shares, made on
    first use unless one was injected.
    """

    secrets: SecretSource
    clock: Clock = field(default_factory=SystemClock)
    environment: str | None = None
    client: httpx.Client | None = None

    def http(self) -> httpx.Client:
        """The shared HTTP client (it never follows redirects: a webhook target must
        not bounce a signed request somewhere else)."""
        if self.client is None:
            self.client = default_http_client()
        return self.client


class ChannelClass(Protocol):
    """What a channel type's class offers the registry: a classmethod building it from settings."""

    def from_config(self, settings: Any, context: BuildContext, *, name: str) -> Channel:
        """The channel ``name`` that ``settings`` describe.

        Raises:
            SecretMissing: a secret read when building is not set.
            StoreUnavailable: the secret source failed transiently.
        """
        ...


@dataclass(frozen=True, kw_only=True)
class ChannelType:
    """One ``type:`` of ``channels.yaml``: import paths of its channel class and settings."""

    channel: str  # "package.module:Class", a ChannelClass
    settings: str  # "package.module:Model", a ChannelSettings subclass
    # Row and queue backends hold pending approvals for a dashboard; nobody reads a
    # question or a lifecycle announcement there (the seed's ApprovalOnlyHttpNotifierEvent).
    approval_only: bool = False

    def settings_model(self) -> type[ChannelSettings]:
        """The settings model, imported now."""
        model: type[ChannelSettings] = load(self.settings)
        return model

    def channel_class(self) -> ChannelClass:
        """The channel class, imported now (with the client library it needs)."""
        cls: ChannelClass = load(self.channel)
        return cls


_CONFIG: Final = "signoff.channels.config"

# Entries may be added at start-up (a plug-in's type); nothing caches this table.
CHANNEL_TYPES: Final[dict[str, ChannelType]] = {
    "webhook": ChannelType(
        channel="signoff.channels.webhook:WebhookChannel", settings=f"{_CONFIG}:WebhookSettings"
    ),
    "slack": ChannelType(
        channel="signoff.channels.slack:SlackChannel", settings=f"{_CONFIG}:SlackSettings"
    ),
    "lark": ChannelType(
        channel="signoff.channels.lark:LarkChannel", settings=f"{_CONFIG}:LarkSettings"
    ),
    "email": ChannelType(
        channel="signoff.channels.email:EmailChannel", settings=f"{_CONFIG}:EmailSettings"
    ),
    "redis": ChannelType(
        channel="signoff.channels.redis:RedisChannel",
        settings=f"{_CONFIG}:RedisSettings",
        approval_only=True,
    ),
    "database": ChannelType(
        channel="signoff.channels.database:DatabaseChannel",
        settings=f"{_CONFIG}:DatabaseSettings",
        approval_only=True,
    ),
}


def build_channel(name: str, settings: ChannelSettings, context: BuildContext) -> Channel:
    """The channel ``name`` of type ``settings.type``.

    Raises:
        SecretMissing: the channel reads its secret when built and found none.
        StoreUnavailable: the secret source failed transiently.
    """
    return CHANNEL_TYPES[settings.type].channel_class().from_config(settings, context, name=name)


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
    context = BuildContext(secrets=secrets, clock=clock, environment=environment, client=http)
    return {
        name: build_channel(name, settings, context) for name, settings in config.channels.items()
    }
