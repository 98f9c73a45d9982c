"""The deployment's channel secrets and chat channels, from the environment."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.keys.tokens import RESUME_SIGNING_SECRET
from signoff.settings import Deployment

if TYPE_CHECKING:
    from signoff.api.context import ChatChannels
    from signoff.channels.config import ChannelsConfig
    from signoff.clock import Clock
    from signoff.secrets.aws import SecretsManagerSecrets

__all__ = ["channel_secret_names", "chat_from_env", "deployment_secrets"]


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


def deployment_secrets(
    config: ChannelsConfig, deployment: Deployment | None = None
) -> SecretsManagerSecrets:
    """The signing secret and every channel secret, read from Secrets Manager.

    A name's secret id is ``SIGNOFF_<NAME>_SECRET_ARN`` when set, else
    ``<SIGNOFF_CHANNEL_SECRETS_PREFIX><name>`` (the template's prefix is ``<stack>/``).
    Its client is built now, with the function: links and chat callbacks read a
    secret in their first invocation, and building it there would only move the cost.
    """
    from signoff.secrets.aws import SecretsManagerSecrets

    settings = deployment or Deployment.from_env()
    prefix = settings.channel_secrets_prefix
    names = [RESUME_SIGNING_SECRET, *channel_secret_names(config)]
    ids = {name: settings.secret_id(name) or f"{prefix}{name}" for name in names}
    return SecretsManagerSecrets(ids, SecretsManagerSecrets.provider())


def chat_from_env(deployment: Deployment, config: ChannelsConfig, clock: Clock) -> ChatChannels:
    """The chat channels whose clicks the resolve function verifies and applies: those
    of every type that declares an inbound route (``ChannelType.inbound``)."""
    from signoff.api.context import ChatChannels
    from signoff.channels.build import BuildContext, ChannelSet
    from signoff.channels.config import ChannelsConfig as Config
    from signoff.channels.registry import inbound_types

    inbound = inbound_types()
    chats = Config(
        channels={
            name: settings for name, settings in config.channels.items() if settings.type in inbound
        }
    )
    secrets = deployment_secrets(config, deployment)
    # Each built on first use and on its own: one chat channel that cannot be built
    # does not stop the clicks of the others.
    channels = ChannelSet(chats, BuildContext(secrets=secrets, clock=clock))
    return ChatChannels(config=chats, secrets=secrets, channels=channels)
