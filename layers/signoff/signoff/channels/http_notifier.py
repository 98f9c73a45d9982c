"""loopengine's ``httpNotifier`` (its ``HttpNotifierConfig``): an agent's own channel.

::

    # agents/<name>/agent.yaml
    httpNotifier:
      channel: webhook                      # webhook | slack | lark | email | database | redis
      config:
        webhookUrl: https://hooks.example.com/loop
        webhookSecret: {secret: loop-hook}  # a reference, as every signoff secret
      events: [approval, question, run_start, run_finish]

loopengine's ``{channel, config, events}`` is mapped onto a channel of
``channels.yaml``'s types, named ``httpNotifier-<agent>``, with loopengine's key
names (``webhookUrl``/``webhookSecret``, ``botToken``/``channelId``,
``appId``/``appSecret``/``chatId``, email ``to``). The agent's ``notify`` gains
that channel with ``events``. Keys signoff's channel needs beyond loopengine's
(Slack's ``signingSecret``, Lark's ``verificationToken``, email's ``from``) are
written beside them, in that type's ``channels.yaml`` spelling. loopengine's
TypeScript-only values (a ``sendEmail`` function, a repository or Redis client
object) get an error saying what signoff uses instead.

The notifier function builds channels without loading agents (no tools, no
rules): ``deployment_channels`` reads ``channels.yaml`` and each agent's
``httpNotifier`` only. An agent whose ``httpNotifier`` is invalid is left out
there (its rows fail as "no channel"); the agent itself fails to load, naming
the field, so one bad agent does not take the others' channels down.
"""

from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from signoff import yamldocs
from signoff.channels.addresses import private_webhooks_allowed
from signoff.channels.config import (
    CHANNELS_FILE,
    ChannelsConfig,
    ChannelSettings,
    load_channels,
)
from signoff.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "HTTP_NOTIFIER_KEY",
    "HttpNotifierConfig",
    "channel_name",
    "deployment_channels",
    "http_notifier_channel",
]

HTTP_NOTIFIER_KEY: Final = "httpNotifier"
AGENT_FILE: Final = "agent.yaml"

HttpNotifierEvent = Literal["approval", "question", "run_start", "run_finish"]

# loopengine's config key → the channel type's own key, where the names differ.
_RENAMED: Final[dict[str, dict[str, str]]] = {
    "webhook": {"webhookUrl": "url", "webhookSecret": "secret"},
}

# loopengine's keys whose values are TypeScript objects or settings signoff takes from
# the deployment: what to write (or not) instead.
_NOT_CARRIED: Final[dict[str, dict[str, str]]] = {
    "email": {
        "sendEmail": "signoff sends mail through Amazon SES; drop sendEmail and write "
        "from: <a verified SES sender>",
        "resolveBaseUrl": "links use the deployment's public URL (SIGNOFF_PUBLIC_URL); drop it",
        "answerBaseUrl": "links use the deployment's public URL (SIGNOFF_PUBLIC_URL); drop it",
        "signingSecret": "links are signed with the deployment's resume-signing key; drop it",
        "linkTtlMs": "a link lives as long as its approval: set approvalTimeout in agent.yaml",
    },
    "database": {
        "repository": "a repository object is TypeScript; signoff inserts the row into "
        "PostgreSQL: write dsn: {secret: <name>} (and table:)",
    },
    "redis": {
        "redis": "a Redis client object is TypeScript; write url: {secret: <name>} "
        "(the secret holds redis://…)",
    },
}

_APPROVAL_ONLY: Final = frozenset({"database", "redis"})


class HttpNotifierConfig(BaseModel):
    """loopengine's ``HttpNotifierConfig``, as written in ``agent.yaml``."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    channel: Literal["webhook", "slack", "lark", "email", "database", "redis"]
    config: dict[str, Any]
    events: list[HttpNotifierEvent] = Field(min_length=1)


def channel_name(agent: str) -> str:
    """The name of ``agent``'s httpNotifier channel (in notify, outbox rows, logs)."""
    return f"{HTTP_NOTIFIER_KEY}-{agent}"


def http_notifier_channel(
    agent: str,
    notifier: HttpNotifierConfig,
    file: str,
    *,
    environ: "Mapping[str, str] | None" = None,
) -> ChannelSettings:
    """``notifier`` as the settings of a ``channels.yaml`` channel of its type.

    Raises:
        ConfigError: naming ``file`` and ``httpNotifier.<field>`` in loopengine's key names.
    """
    where = f"{HTTP_NOTIFIER_KEY}.config"
    if notifier.channel in _APPROVAL_ONLY:
        others = sorted({e for e in notifier.events if e != "approval"})
        if others:
            # approval only (loopengine's ApprovalOnlyHttpNotifierEvent): a row or a queue
            # entry is read by a dashboard, nobody reads a question or an announcement there
            raise ConfigError(
                file,
                f"{HTTP_NOTIFIER_KEY}.events",
                f"a {notifier.channel} channel only takes the 'approval' event, "
                f"not {', '.join(others)}",
            )
    renamed = _RENAMED.get(notifier.channel, {})
    not_carried = _NOT_CARRIED.get(notifier.channel, {})
    entry: dict[str, Any] = {"type": notifier.channel}
    for key, value in notifier.config.items():
        if key in not_carried:
            raise ConfigError(file, f"{where}.{key}", not_carried[key])
        target = renamed.get(key, key)
        if target in entry:
            raise ConfigError(file, f"{where}.{key}", f"given twice (as {key} and {target})")
        # loopengine's email `to` is one address; the channel's is a list.
        entry[target] = [value] if notifier.channel == "email" and key == "to" else value
    back = {target: key for key, target in renamed.items()}  # errors name loopengine's keys
    try:
        config = ChannelsConfig.model_validate({"channels": {channel_name(agent): entry}})
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        loc = [str(part) for part in error["loc"][2:]]  # past "channels", <name>
        if loc and loc[0] in back:
            loc[0] = back[loc[0]]
        field = ".".join([where, *loc]) if loc else where
        raise ConfigError(file, field, error["msg"].removeprefix("Value error, ")) from exc
    settings = config.channels[channel_name(agent)]
    refused = settings.refused_target(allow_private=private_webhooks_allowed(environ))
    if refused:
        field, problem = refused
        raise ConfigError(file, f"{where}.{back.get(field, field)}", problem)
    return settings


def deployment_channels(
    agents_dir: "Path", *, environ: "Mapping[str, str] | None" = None
) -> ChannelsConfig:
    """``channels.yaml`` plus each agent's valid ``httpNotifier`` channel.

    Raises:
        ConfigError: ``channels.yaml`` is invalid, or defines a channel named like an
            agent's httpNotifier channel.
    """
    config = load_channels(agents_dir / CHANNELS_FILE, environ=environ)
    if not agents_dir.is_dir():
        return config
    extra: dict[str, ChannelSettings] = {}
    for file in sorted(agents_dir.glob(f"*/{AGENT_FILE}")):
        agent = file.parent.name
        notifier = _declared(file)
        if notifier is None:
            continue
        name = channel_name(agent)
        if name in config.channels:
            raise ConfigError(
                str(agents_dir / CHANNELS_FILE),
                f"channels.{name}",
                f"is the name of agent {agent}'s httpNotifier channel: rename one",
            )
        try:
            extra[name] = http_notifier_channel(agent, notifier, str(file), environ=environ)
        except ConfigError:
            continue  # reported when the agent loads; its rows fail as "no channel"
    if not extra:
        return config
    return config.model_copy(update={"channels": {**config.channels, **extra}})


def _declared(file: "Path") -> HttpNotifierConfig | None:
    """The ``httpNotifier`` of an ``agent.yaml``, if it has a valid one."""
    try:
        raw = yamldocs.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yamldocs.YAMLError):
        return None
    if not isinstance(raw, dict) or HTTP_NOTIFIER_KEY not in raw:
        return None
    try:
        return HttpNotifierConfig.model_validate(raw[HTTP_NOTIFIER_KEY])
    except ValidationError:
        return None
