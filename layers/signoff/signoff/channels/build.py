"""Building a deployment's channels from ``channels.yaml``: the adapters and their HTTP client.

Each channel's type names its ``CHANNEL_TYPES`` entry (``channels/registry.py``),
whose channel class is imported here, when the channel is built: a deployment
loads the modules (and client libraries) of the channels it defines and no
others. The core validates ``channels.yaml`` against the registry alone and
never imports this module (the core contract in ``pyproject.toml``).

A channel class is built by ``from_config(settings, context, *, name=...)``
(``ChannelClass``), with a ``BuildContext``: the secret source, the clock, the
environment and the HTTP client every HTTP channel shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from signoff.channels.registry import CHANNEL_TYPES
from signoff.clock import SystemClock
from signoff.plugins import load

if TYPE_CHECKING:
    import httpx

    from signoff.channels.base import Channel
    from signoff.channels.config import ChannelsConfig, ChannelSettings
    from signoff.clock import Clock
    from signoff.secrets.base import SecretSource

__all__ = [
    "HTTP_TIMEOUT",
    "BuildContext",
    "ChannelClass",
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
    """What a channel type's class offers: a classmethod building it from settings."""

    def from_config(self, settings: Any, context: BuildContext, *, name: str) -> Channel:
        """The channel ``name`` that ``settings`` describe.

        Raises:
            SecretMissing: a secret read when building is not set.
            StoreUnavailable: the secret source failed transiently.
        """
        ...


def build_channel(name: str, settings: ChannelSettings, context: BuildContext) -> Channel:
    """The channel ``name`` of type ``settings.type``, its class imported now.

    Raises:
        SecretMissing: the channel reads its secret when built and found none.
        StoreUnavailable: the secret source failed transiently.
    """
    cls: ChannelClass = load(CHANNEL_TYPES[settings.type].channel)
    return cls.from_config(settings, context, name=name)


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
