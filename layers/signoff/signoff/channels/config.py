"""``channels.yaml``: the deployment's notification channels, defined once beside the agents.

::

    channels:
      ops-webhook: {type: webhook, url: "https://hooks.example.com/signoff",
                    secret: {secret: webhook-signing}}
      support-email: {type: email, to: [ops@example.com], from: signoff@example.com}

A channel's ``type`` names an entry of ``CHANNEL_TYPES`` (``channels/registry.py``),
whose settings model validates the rest; the built-in types' models are here.
Secrets are referenced by name (``{secret: name}``, read from the deployment's
secret source when a channel sends), never written inline. Agents name the
channels they want in ``agent.yaml``'s ``notify``; ``check_agent_notify``
refuses a name that is not defined here, so a misspelt channel fails the agent's
load instead of its first send. A channel may not take a name
signoff writes in the audit by itself (``signoff.approver.actors.RESERVED_CHANNELS``:
``expiry``, ``escalation``, ``api``, ``link``, ``inbox``, …): a person's decision
through it would read as the sweeper's or a built-in way in's. Webhook targets are checked
against private, loopback and link-local addresses here (literal addresses,
``channels/addresses.py``) and again when sending (what a hostname resolves to).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationError,
    field_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import InitErrorDetails, PydanticCustomError

from signoff import yamldocs
from signoff.approver.actors import RESERVED_CHANNELS
from signoff.channels.addresses import private_webhooks_allowed, public_url_problem
from signoff.channels.plugin import installed, plugin_class, plugin_options
from signoff.channels.registry import CHANNEL_TYPES
from signoff.errors import ConfigError
from signoff.plugins import load

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = [
    "CHANNELS_FILE",
    "IMPLICIT_CHANNELS",
    "ChannelSettings",
    "ChannelsConfig",
    "ConsoleSettings",
    "DatabaseSettings",
    "EmailSettings",
    "LarkSettings",
    "PluginSettings",
    "RedisSettings",
    "SecretRef",
    "SlackSettings",
    "WebhookSettings",
    "check_agent_notify",
    "load_channels",
]

CHANNELS_FILE: Final = "channels.yaml"

# A channel's name ends up in idempotency keys (``runId:pendingId:channel``) and
# in secret-free log lines: no colon, no spaces, nothing that needs quoting.
_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
# No colon (an unquoted address never has one): the pages tell an API key's
# ``apikey:<key id>@<tenant>`` from an address by it.
_EMAIL: Final = re.compile(r"^[^@\s<>:]+@[^@\s<>:]+\.[^@\s<>:]+$")
# A table name is spliced into SQL (quoted, by psycopg.sql.Identifier): only a plain
# identifier, optionally schema-qualified, gets that far.
_TABLE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?")
DEFAULT_TABLE: Final = "signoff_pending_approvals"
DEFAULT_QUEUE_KEY: Final = "signoff:pending-approvals"


class _Settings(BaseModel):
    model_config = ConfigDict(
        defer_build=True,
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
    )


class SecretRef(_Settings):
    """``{secret: name}``: the name of a secret in the deployment's secret source."""

    secret: str = Field(min_length=1)


def _referenced(value: Any) -> Any:
    """Refuses a plain value where a ``{secret: name}`` reference belongs."""
    if isinstance(value, str | int | float | bytes):
        raise PydanticCustomError(
            "inline_secret",
            "secrets are referenced, never inline: write {secret: <name>} and keep the value "
            "in the secret source",
        )
    return value


Secret = Annotated[SecretRef, BeforeValidator(_referenced)]


def _http_url(value: str) -> str:
    """An absolute http(s) URL with a host and no credentials in it."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an absolute http:// or https:// URL")
    if parts.username or parts.password:
        # user:password@ is a secret written inline, and would be sent on every request
        raise PydanticCustomError(
            "inline_secret", "secrets are referenced, never inline: no credentials in the URL"
        )
    return value


def _email(value: str) -> str:
    if not _EMAIL.match(value):
        raise ValueError(f"{value!r} is not an email address")
    return value


def validate_table(table: str) -> str:
    """``table`` if it is a plain identifier, optionally ``schema.table``.

    Raises:
        ValueError: anything else.
    """
    if not _TABLE.fullmatch(table):
        raise ValueError(
            f"{table!r} is not a table name: letters, digits and '_', optionally schema.table"
        )
    return table


HttpUrl = Annotated[str, AfterValidator(_http_url)]
EmailAddress = Annotated[str, AfterValidator(_email)]


class ChannelSettings(_Settings):
    """What every channel type's settings share: ``type``, its name in ``CHANNEL_TYPES``.

    A type's own model narrows ``type`` to ``Literal["<name>"]`` and adds its fields.
    """

    type: str


class WebhookSettings(ChannelSettings):
    """A signed POST (Standard Webhooks) to ``url``."""

    type: Literal["webhook"]
    url: HttpUrl
    secret: Secret
    allow_private: bool = False


class _ChatSettings(ChannelSettings):
    """A chat app's channel: ``approvers`` are the app's user ids (empty: anyone)."""

    approvers: list[str] = Field(default_factory=list)

    def allows(self, user_id: str) -> bool:
        """Whether ``user_id`` may decide from this channel (no list means anyone in it may)."""
        return not self.approvers or user_id in self.approvers


class SlackSettings(_ChatSettings):
    """A Block Kit message in a Slack channel; ``approvers`` are Slack user ids."""

    type: Literal["slack"]
    channel_id: str = Field(min_length=1)
    bot_token: Secret
    signing_secret: Secret
    base_url: HttpUrl = "https://slack.com/api"


class LarkSettings(_ChatSettings):
    """An interactive card in one Lark/Feishu chat; ``approvers`` are open ids."""

    type: Literal["lark"]
    chat_id: str = Field(min_length=1)
    app_id: str = Field(min_length=1)
    app_secret: Secret
    verification_token: Secret
    encrypt_key: Secret | None = None
    base_url: HttpUrl = "https://open.larksuite.com"


class EmailSettings(ChannelSettings):
    """Mail through SES v2; ``approvers`` are the addresses that may decide (empty: anyone)."""

    type: Literal["email"]
    to: list[EmailAddress] = Field(min_length=1)
    sender: EmailAddress = Field(alias="from")
    approvers: list[EmailAddress] = Field(default_factory=list)
    # Each approver's approval mail also links their approvals inbox (``GET /inbox``),
    # signed for their address: every waiting item of the tenant, not only this one.
    inbox_link: bool = False

    def mails(self, address: str) -> bool:
        """Whether ``address`` is one of this channel's recipients (case-insensitively)."""
        return _folded(address) in {_folded(a) for a in self.to}

    def allows(self, address: str) -> bool:
        """Whether ``address`` may decide from its link (no approvers listed: any recipient)."""
        return not self.approvers or _folded(address) in {_folded(a) for a in self.approvers}


def _folded(address: str) -> str:
    # Domains are case-insensitive; local parts are in practice treated alike by every
    # provider signoff mails through, so one spelling of an approver matches another.
    return address.strip().lower()


class RedisSettings(ChannelSettings):
    """A pending-approval entry pushed onto a Redis list (approvals only).

    ``url`` names the secret holding ``redis://user:pass@host:6379/0`` (or ``rediss://``).
    """

    type: Literal["redis"]
    url: Secret
    # No braces: the marker key's hash tag is built from this name.
    queue_key: str = Field(default=DEFAULT_QUEUE_KEY, pattern=r"^[^{}]+$")
    timeout_seconds: float = Field(default=5.0, gt=0)


class DatabaseSettings(ChannelSettings):
    """A pending-approval row inserted into a PostgreSQL table (approvals only).

    ``dsn`` names the secret holding the libpq DSN (``postgresql://user:pass@host/db``).
    """

    type: Literal["database"]
    dsn: Secret
    table: Annotated[str, AfterValidator(validate_table)] = DEFAULT_TABLE
    connect_timeout_seconds: int = Field(default=5, ge=1)
    statement_timeout_seconds: int = Field(default=5, ge=1)


class ConsoleSettings(ChannelSettings):
    """One line per notification on stdout, or to the ``signoff.console`` logger."""

    type: Literal["console"]
    output: Literal["stdout", "log"] = "stdout"
    # The confirmation page's link carries a resume token, and a line lands in a log
    # (deployed: CloudWatch), which must hold no token: shown only when asked for.
    links: bool = False


class PluginSettings(ChannelSettings):
    """A plug-in channel (``channels/plugin.py``): ``type: python`` or an installed type.

    ``class`` is ``package.module:Class`` (an installed type's comes from its entry
    point); ``options`` go to the class's ``from_config``.
    """

    type: str
    class_path: str = Field(alias="class", min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)


# Channels an agent may name without defining them (``notify: console`` works out of
# the box); a channels.yaml entry of the same name takes their place.
IMPLICIT_CHANNELS: Final[dict[str, ChannelSettings]] = {"console": ConsoleSettings(type="console")}


class ChannelsConfig(_Settings):
    """The contents of ``channels.yaml``: channel settings by channel name.

    Each entry is validated by the settings model its ``type`` names in the
    registry (a union discriminated by ``type``, drawn from ``CHANNEL_TYPES``).
    """

    # SerializeAsAny: a dump (the secret names, a copy) holds each type's own fields.
    channels: dict[str, SerializeAsAny[ChannelSettings]] = Field(default_factory=dict)

    @field_validator("channels", mode="before")
    @classmethod
    def _by_type(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value  # the field's own validation says what is wrong
        settings: dict[Any, Any] = {}
        errors: list[InitErrorDetails] = []
        for name, entry in value.items():
            try:
                settings[name] = _typed(entry)
            except ValidationError as exc:
                errors.extend(_within(name, exc))
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return settings

    def names(self) -> list[str]:
        """The defined channel names, sorted."""
        return sorted(self.channels)

    def settings(self, name: str) -> ChannelSettings | None:
        """The channel ``name``'s settings: defined here, else implicit (``console``)."""
        return self.channels.get(name) or IMPLICIT_CHANNELS.get(name)


def _typed(entry: Any) -> Any:
    """``entry`` validated by the settings model of its ``type``.

    Raises:
        ValidationError: no registered type, or the settings are invalid.
    """
    if isinstance(entry, ChannelSettings):
        return entry
    tag = entry.get("type") if isinstance(entry, dict) else None
    # An unknown type may be an installed plug-in's: it joins the registry now.
    kind = installed(tag) if isinstance(tag, str) else None
    if kind is None:
        given = f"unknown channel type {tag!r}; " if tag is not None else ""
        problem = (
            f"{given}a channel's type is one of {', '.join(CHANNEL_TYPES)}, "
            "or an installed plug-in's (entry point group signoff.channels)"
        )
        raise _invalid("channel_type", problem, ("type",), tag)
    if kind.plugin is not None:
        if "class" in entry:
            problem = f"a {tag} channel's class is its entry point's ({kind.plugin})"
            raise _invalid("plugin_class", problem, ("class",), entry["class"])
        entry = {**entry, "class": kind.plugin}
    model: type[ChannelSettings] = load(kind.settings)  # the type's module, imported now
    settings = model.model_validate(entry)
    if isinstance(settings, PluginSettings):
        _check_plugin(settings)
    return settings


def _check_plugin(settings: PluginSettings) -> None:
    """Refuses, at load, a plug-in class that cannot be imported or is no channel, and bad options.

    Raises:
        ValidationError: at ``class`` or ``options.<field>``.
    """
    try:
        cls = plugin_class(settings.class_path)
    except (ImportError, ValueError) as exc:
        raise _invalid("plugin_class", str(exc), ("class",), settings.class_path) from exc
    try:
        plugin_options(cls, settings.options)
    except ValidationError as exc:
        errors = [
            InitErrorDetails(
                type=PydanticCustomError(err["type"], err["msg"]),
                loc=("options", *err["loc"]),
                input=err.get("input"),
            )
            for err in exc.errors(include_url=False)
        ]
        raise ValidationError.from_exception_data("PluginSettings", errors) from exc


def _invalid(kind: str, problem: str, loc: tuple[str, ...], value: Any) -> ValidationError:
    """One validation error at ``loc``, worded ``problem``."""
    return ValidationError.from_exception_data(
        "ChannelSettings",
        [InitErrorDetails(type=PydanticCustomError(kind, problem), loc=loc, input=value)],
    )


def _within(name: str, exc: ValidationError) -> list[InitErrorDetails]:
    """``exc``'s errors placed under the channel ``name``, their messages kept."""
    return [
        InitErrorDetails(
            # The message as the model worded it (without a context nothing is formatted).
            type=PydanticCustomError(err["type"], err["msg"]),
            loc=(name, *err["loc"]),
            input=err.get("input"),
        )
        for err in exc.errors(include_url=False)
    ]


def load_channels(path: Path, *, environ: Mapping[str, str] | None = None) -> ChannelsConfig:
    """Load and validate ``channels.yaml``; a missing file is a deployment without channels.

    Raises:
        ConfigError: the file is unreadable or invalid (names ``channels.<name>.<field>``).
    """
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        raw = yamldocs.safe_load(text)
    except FileNotFoundError:
        return ChannelsConfig()
    except OSError as exc:
        raise ConfigError(file, "", f"cannot be read: {exc.strerror or exc}") from exc
    except yamldocs.YAMLError as exc:
        raise ConfigError(file, "", f"invalid YAML: {exc}") from exc
    if raw is None:
        return ChannelsConfig()
    if not isinstance(raw, dict):
        raise ConfigError(file, "", "must be a mapping with a 'channels' key")
    channels = raw.get("channels")
    if isinstance(channels, dict):
        for name in channels:
            if not isinstance(name, str) or not _NAME.match(name):
                raise ConfigError(
                    file,
                    f"channels.{name}",
                    "a channel name is letters, digits, '-' and '_' (at most 64, no colon)",
                )
            if name in RESERVED_CHANNELS:
                raise ConfigError(file, f"channels.{name}", _reserved(name, text))
    try:
        config = ChannelsConfig.model_validate(raw)
    except ValidationError as exc:
        field, problem = _first_error(exc)
        raise ConfigError(file, field, problem) from exc
    allow_all = private_webhooks_allowed(environ)
    for name, settings in config.channels.items():
        if isinstance(settings, WebhookSettings) and not (allow_all or settings.allow_private):
            refused = public_url_problem(settings.url)
            if refused:
                raise ConfigError(file, f"channels.{name}.url", refused)
    return config


def _reserved(name: str, text: str) -> str:
    """Why the channel ``name`` is refused, with where ``channels.yaml``'s ``text`` names it."""
    reserved = ", ".join(sorted(RESERVED_CHANNELS))
    where = yamldocs.key_mark(text, "channels", name)
    at = f" (line {where[0]}, column {where[1]})" if where else ""
    return (
        f"{name!r} is reserved: the audit records the sweeper's decisions and the built-in "
        f"ways in under these names ({reserved}), and a person's decision through this "
        f"channel would read as one of them; rename the channel{at}"
    )


def check_agent_notify(
    agent_file: str, notify: Mapping[str, Sequence[str]], channels: ChannelsConfig
) -> None:
    """Check an agent's ``notify`` against the defined channels.

    Raises:
        ConfigError: a name that is no channel, an empty event list, or an event
            other than ``approval`` for a database or redis channel.
    """
    for name, events in notify.items():
        settings = channels.settings(name)  # implicit channels (console) included
        if settings is None:
            defined = ", ".join(channels.names()) or "none defined"
            raise ConfigError(
                agent_file,
                f"notify.{name}",
                f"no channel named {name!r} in {CHANNELS_FILE}; channels: {defined}",
            )
        if not events:
            # an empty list would be accepted and then never send anything
            raise ConfigError(agent_file, f"notify.{name}", "lists no events to send")
        if _approval_only(settings):
            others = sorted({event for event in events if event != "approval"})
            if others:
                raise ConfigError(
                    agent_file,
                    f"notify.{name}",
                    f"a {settings.type} channel only takes the 'approval' event, "
                    f"not {', '.join(others)}",
                )


def _approval_only(settings: ChannelSettings) -> bool:
    """Whether the channel takes approvals only: its type's entry says, or a plug-in
    class's ``approval_only`` attribute (a row or queue backend written as a plug-in)."""
    if isinstance(settings, PluginSettings):
        # Imported when channels.yaml was validated: this import is a lookup.
        return getattr(plugin_class(settings.class_path), "approval_only", False) is True
    return CHANNEL_TYPES[settings.type].approval_only


def _first_error(exc: ValidationError) -> tuple[str, str]:
    """The first error as (``channels.<name>.<field>``, problem)."""
    err = exc.errors(include_url=False)[0]
    loc = [str(part) for part in err["loc"]]
    problem = err["msg"].removeprefix("Value error, ")
    return ".".join(loc) or "(root)", problem
