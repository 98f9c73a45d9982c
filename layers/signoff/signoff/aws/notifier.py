"""Builds the notifier from the environment, once per cold start.

It sends what the store holds and never runs a turn, so it imports neither the
agents' loader nor the durable runner: ``channels.yaml`` is all it reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from signoff.aws.channels import deployment_secrets
from signoff.channels.config import CHANNELS_FILE, load_channels
from signoff.clock import SystemClock
from signoff.keyring import rotating_signer
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier
from signoff.settings import Deployment
from signoff.store.dynamodb import DynamoStore

if TYPE_CHECKING:
    from signoff.channels.base import Channel

__all__ = ["notifier_from_env"]


class _Channels(Mapping[str, "Channel"]):
    """The deployment's channels, built on the first send rather than during a cold start."""

    def __init__(self, build: Callable[[], dict[str, Channel]]) -> None:
        self._build = build
        self._built: dict[str, Channel] | None = None

    def _channels(self) -> dict[str, Channel]:
        if self._built is None:
            self._built = self._build()
        return self._built

    def __getitem__(self, name: str) -> Channel:
        return self._channels()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._channels())

    def __len__(self) -> int:
        return len(self._channels())


def notifier_from_env(deployment: Deployment | None = None) -> Notifier:
    """The notifier of the deployment the template describes (read here when not given)."""
    settings = deployment or Deployment.from_env()
    clock = SystemClock()
    store = DynamoStore.from_env(clock=clock, deployment=settings)
    # The file AgentCatalog.channels reads, without loading the agents themselves.
    channels_config = load_channels(settings.agents_dir / CHANNELS_FILE)
    secrets = deployment_secrets(channels_config, settings)

    def channels() -> dict[str, Channel]:
        # The registry's HTTP client never follows redirects: a webhook target must
        # not bounce a signed request somewhere else.
        from signoff.channels.build import build_channels

        return build_channels(channels_config, secrets, clock=clock)

    public_url = settings.public_url
    signer = None

    def composer() -> Composer:
        nonlocal signer
        signer = signer or rotating_signer(secrets, clock)
        return Composer(signer=signer, public_url=public_url)

    return Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels=_Channels(channels),
        composer=composer,
        clock=clock,
    )
