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

import logging
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from pydantic import ValidationError

from signoff.channels.registry import CHANNEL_TYPES
from signoff.clock import SystemClock
from signoff.errors import ConfigError, SecretMissing, SendFailed, StoreUnavailable
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
    "ChannelSet",
    "build_channel",
    "build_channels",
    "default_http_client",
    "unbuildable",
]

_log = logging.getLogger(__name__)

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


def unbuildable(name: str, settings: ChannelSettings, exc: Exception) -> SendFailed:
    """Why the channel ``name`` could not be built, as the failure its rows record.

    Permanent unless the cause can pass by itself: a missing client library, a
    missing secret and bad settings each need an operator (the row says which
    fix), and retrying them would only hold the queue message until its DLQ. A
    secret source that failed transiently (throttling, network) is retryable:
    the next delivery builds the channel again.
    """
    kind = settings.type
    if isinstance(exc, StoreUnavailable):
        return SendFailed(name, f"its secret could not be read now: {exc}", retryable=True)
    if isinstance(exc, ImportError):
        extra = CHANNEL_TYPES[kind].extra if kind in CHANNEL_TYPES else None
        if extra is not None and f"signoff[{extra}]" in str(exc):
            problem = str(exc)  # require_extra's message: the library and the extra
        elif extra is not None:
            problem = (
                f"the {kind} channel needs a library that cannot be imported here ({exc}): "
                f"install the extra `pip install 'signoff[{extra}]'` "
                "(deployed: add it to the engine layer, layers/signoff/requirements.txt)"
            )
        else:
            problem = f"its code cannot be imported: {type(exc).__name__}: {exc}"
        return SendFailed(name, f"cannot be built: {problem}", retryable=False)
    if isinstance(exc, SecretMissing):
        # An operator creates the secret; then `signoff outbox retry` re-drives the row.
        return SendFailed(name, f"cannot be built: {exc}", retryable=False)
    if isinstance(exc, ValueError | ConfigError | ValidationError):
        # ValidationError is a ValueError; both name the setting, never a secret's value.
        return SendFailed(name, f"cannot be built: bad settings: {exc}", retryable=False)
    # A plug-in's own error: its message may quote what it was given (a DSN), so only
    # the type is recorded; the traceback is the plug-in author's to reproduce.
    return SendFailed(
        name, f"cannot be built: {kind} channel raised {type(exc).__name__}", retryable=False
    )


class ChannelSet(Mapping[str, "Channel"]):
    """The channels of ``channels.yaml``, each built on its first use, on its own.

    One channel that cannot be built (its client library missing, its secret
    missing, its settings refused) must not silence the others: looking it up
    raises its ``SendFailed`` (``unbuildable``), which the notifier records on
    that channel's rows only. A permanent failure is kept (the same answer, one
    log line per cold start); a transient one is not, so the next use retries.
    Builds run lazily (a cold start reads no secret) and once per channel, also
    when deliveries on several threads reach the same channel together.
    """

    def __init__(self, config: ChannelsConfig, context: BuildContext) -> None:
        self._config = config
        self._context = context
        self._built: dict[str, Channel] = {}
        self._broken: dict[str, SendFailed] = {}
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def __getitem__(self, name: str) -> Channel:
        """The channel ``name``, built now if it was not yet.

        Raises:
            KeyError: no channel of that name in ``channels.yaml``.
            SendFailed: the channel cannot be built (``unbuildable`` says why).
        """
        settings = self._config.settings(name)  # defined, or implicit (console)
        if settings is None:
            raise KeyError(name)
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            if name in self._built:
                return self._built[name]
            if name in self._broken:
                raise self._broken[name]
            try:
                channel = build_channel(name, settings, self._context)
            except Exception as exc:  # any cause fails this channel's rows, and only them
                failure = unbuildable(name, settings, exc)
                _log.error(
                    "channel cannot be built",
                    extra={
                        "channel": name,
                        "channel_type": settings.type,
                        "reason": failure.reason,
                        "retryable": failure.retryable,
                    },
                )
                if not failure.retryable:
                    self._broken[name] = failure
                raise failure from exc
            self._built[name] = channel
            return channel

    def provide(self, channels: Mapping[str, Channel]) -> None:
        """Use ``channels`` as they are, for names of ``channels.yaml``, instead of building
        them (the local stack's webhooks re-aimed at its own port)."""
        with self._guard:
            self._built.update({n: c for n, c in channels.items() if n in self._config.channels})

    def __iter__(self) -> Iterator[str]:
        return iter(self._config.channels)

    def __len__(self) -> int:
        return len(self._config.channels)

    def __contains__(self, name: object) -> bool:
        # Defined is enough: whether it builds is said when it is used.
        return isinstance(name, str) and self._config.settings(name) is not None
