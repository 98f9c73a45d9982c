"""The channel types ``channels.yaml`` may use: one table, data only.

``CHANNEL_TYPES``: a type's name (``type:`` in ``channels.yaml``) → its channel
class and its settings model, both as import paths. Validating ``channels.yaml``
(``channels/config.py``) imports the settings model of each type it uses;
building (``channels/build.py``) imports the channel class of each type it uses.
So a deployment loads the modules (and client libraries) of the channels it
defines and no others, and this module imports nothing: the core reads the table
without reaching an adapter or an HTTP client.

A channel class is built by ``from_config(settings, context, *, name=...)``
(``channels.build.ChannelClass``); its settings model subclasses
``ChannelSettings`` with ``type: Literal["<name>"]``. Adding a type is one line
here (see ``docs/extending.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["CHANNEL_TYPES", "ChannelType", "inbound_types"]


@dataclass(frozen=True, kw_only=True)
class ChannelType:
    """One ``type:`` of ``channels.yaml``: import paths of its channel class and settings."""

    channel: str  # "package.module:Class", a channels.build.ChannelClass
    # "package.module:Model", a channels.config.ChannelSettings subclass; a module
    # without the channel's client libraries (every function validates channels.yaml)
    settings: str
    # Row and queue backends hold pending approvals for a dashboard; nobody reads a
    # question or a lifecycle announcement there (loopengine's ApprovalOnlyHttpNotifierEvent).
    approval_only: bool = False
    # The ``signoff[<extra>]`` that installs the client library the channel needs, if
    # any: a deployment without it gets this named in the channel's failed rows.
    extra: str | None = None
    # A type installed through the ``signoff.channels`` entry point: the class it names
    # ("package.module:Class"), built by ``channel`` (the plug-in builder) from the
    # channel's ``options``.
    plugin: str | None = None
    # The API route a message of this type sends its clicks back to (a chat app's
    # buttons), if any: the resolve function keeps these channels' settings, secrets
    # and senders to verify and apply a click, and updates the message with the outcome.
    inbound: str | None = None


def inbound_types() -> frozenset[str]:
    """The channel types whose messages' clicks come back to an API route."""
    return frozenset(name for name, kind in CHANNEL_TYPES.items() if kind.inbound)


_SETTINGS: Final = "signoff.channels.settings"

# Entries may be added at start-up (a plug-in's type); nothing caches this table.
CHANNEL_TYPES: Final[dict[str, ChannelType]] = {
    "webhook": ChannelType(
        channel="signoff.channels.webhook:WebhookChannel",
        settings=f"{_SETTINGS}.webhook:WebhookSettings",
    ),
    "slack": ChannelType(
        channel="signoff.channels.slack.channel:SlackChannel",
        settings=f"{_SETTINGS}.slack:SlackSettings",
        inbound="/slack/interactions",
    ),
    "lark": ChannelType(
        channel="signoff.channels.lark.channel:LarkChannel",
        settings=f"{_SETTINGS}.lark:LarkSettings",
        inbound="/lark/callback",
    ),
    "email": ChannelType(
        channel="signoff.channels.email:EmailChannel", settings=f"{_SETTINGS}.email:EmailSettings"
    ),
    "github": ChannelType(
        channel="signoff.channels.github.channel:GitHubChannel",
        settings=f"{_SETTINGS}.github:GitHubSettings",
    ),
    "openclaw": ChannelType(
        channel="signoff.channels.openclaw:OpenClawChannel",
        settings=f"{_SETTINGS}.openclaw:OpenClawSettings",
    ),
    "redis": ChannelType(
        channel="signoff.channels.database.redis:RedisChannel",
        settings=f"{_SETTINGS}.redis:RedisSettings",
        approval_only=True,
        extra="redis",
    ),
    "database": ChannelType(
        channel="signoff.channels.database.channel:DatabaseChannel",
        settings=f"{_SETTINGS}.database:DatabaseSettings",
        approval_only=True,
        extra="database",
    ),
    "console": ChannelType(
        channel="signoff.channels.console:ConsoleChannel",
        settings=f"{_SETTINGS}.console:ConsoleSettings",
    ),
    # A plug-in class named in channels.yaml (``class: "package.module:Class"``); a
    # type installed through the ``signoff.channels`` entry point joins this table
    # with the same builder when a channel of that type is configured (channels/plugin.py).
    "python": ChannelType(
        channel="signoff.channels.plugin:PluginChannel",
        settings=f"{_SETTINGS}.plugin:PluginSettings",
    ),
}
