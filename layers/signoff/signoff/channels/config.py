"""``channels.yaml``: the deployment's notification channels, defined once beside the agents.

::

    channels:
      ops-webhook: {type: webhook, url: "https://hooks.example.com/signoff",
                    secret: {secret: webhook-signing}}
      support-email: {type: email, to: [ops@example.com], from: signoff@example.com}

A channel's ``type`` names an entry of ``CHANNEL_TYPES`` (``channels/registry.py``),
whose settings model validates the rest (the built-in types' in ``channels/settings/``,
each imported only when ``channels.yaml`` uses its type); the base model and the
field types they share are here.
Secrets are referenced by name (``{secret: name}``, read from the deployment's
secret source when a channel sends), never written inline. Agents name the
channels they want in ``agent.yaml``'s ``notify``; ``check_agent_notify``
refuses a name that is not defined here, so a misspelt channel fails the agent's
load instead of its first send. A channel may not take a name
signoff writes in the audit by itself (``signoff.approver.actors.RESERVED_CHANNELS``:
``expiry``, ``escalation``, ``api``, ``link``, ``inbox``, …): a person's decision
through it would read as the sweeper's or a built-in way in's. Webhook targets are checked
against private, loopback and link-local addresses here (literal addresses,
``ChannelSettings.refused_target``) and again when sending (what a hostname resolves to).
"""

import re
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Final
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
from signoff.channels.addresses import private_webhooks_allowed
from signoff.channels.plugin import installed
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
    "HttpUrl",
    "Secret",
    "SecretRef",
    "SettingsModel",
    "check_agent_notify",
    "load_channels",
    "validation_error",
]

CHANNELS_FILE: Final = "channels.yaml"

# A channel's name ends up in idempotency keys (``runId:pendingId:channel``) and
# in secret-free log lines: no colon, no spaces, nothing that needs quoting.
_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class SettingsModel(BaseModel):
    """What every part of ``channels.yaml`` is: frozen, no unknown keys, camelCase or
    snake_case keys alike."""

    model_config = ConfigDict(
        defer_build=True,
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
    )


class SecretRef(SettingsModel):
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


HttpUrl = Annotated[str, AfterValidator(_http_url)]


class ChannelSettings(SettingsModel):
    """What every channel type's settings share: ``type``, its name in ``CHANNEL_TYPES``.

    A type's own model narrows ``type`` to ``Literal["<name>"]`` and adds its fields;
    it may override the checks below, which the loader makes without importing it.
    """

    type: str

    def verify(self) -> None:
        """Checks, once validated at load, what the fields alone cannot (a plug-in's class).

        Raises:
            ValidationError: at the field at fault.
        """

    def refused_target(self, *, allow_private: bool) -> tuple[str, str] | None:
        """The field and the problem of a target address refused at load; None if none.

        ``allow_private``: the deployment allows private, loopback and link-local ones.
        """
        return None

    def approval_only(self) -> bool:
        """Whether the channel takes approvals only (its type's entry in ``CHANNEL_TYPES``)."""
        return CHANNEL_TYPES[self.type].approval_only


# Channels an agent may name without defining them (``notify: console`` works out of
# the box); a channels.yaml entry of the same name takes their place. Validated when
# first asked for, so a deployment that never names one never imports its type.
IMPLICIT_CHANNELS: "Final[Mapping[str, Mapping[str, Any]]]" = {"console": {"type": "console"}}


class ChannelsConfig(SettingsModel):
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
        return self.channels.get(name) or _implicit(name)


@cache
def _implicit(name: str) -> ChannelSettings | None:
    entry = IMPLICIT_CHANNELS.get(name)
    return None if entry is None else _typed(dict(entry))


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
        raise validation_error("channel_type", problem, ("type",), tag)
    if kind.plugin is not None:
        if "class" in entry:
            problem = f"a {tag} channel's class is its entry point's ({kind.plugin})"
            raise validation_error("plugin_class", problem, ("class",), entry["class"])
        entry = {**entry, "class": kind.plugin}
    model: type[ChannelSettings] = load(kind.settings)  # the type's module, imported now
    settings = model.model_validate(entry)
    settings.verify()
    return settings


def validation_error(kind: str, problem: str, loc: tuple[str, ...], value: Any) -> ValidationError:
    """One validation error at ``loc``, worded ``problem`` (of the error type ``kind``)."""
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


def load_channels(path: "Path", *, environ: "Mapping[str, str] | None" = None) -> ChannelsConfig:
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
        refused = settings.refused_target(allow_private=allow_all)
        if refused:
            field, problem = refused
            raise ConfigError(file, f"channels.{name}.{field}", problem)
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
    agent_file: str, notify: "Mapping[str, Sequence[str]]", channels: ChannelsConfig
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
        if settings.approval_only():
            others = sorted({event for event in events if event != "approval"})
            if others:
                raise ConfigError(
                    agent_file,
                    f"notify.{name}",
                    f"a {settings.type} channel only takes the 'approval' event, "
                    f"not {', '.join(others)}",
                )


def _first_error(exc: ValidationError) -> tuple[str, str]:
    """The first error as (``channels.<name>.<field>``, problem)."""
    err = exc.errors(include_url=False)[0]
    loc = [str(part) for part in err["loc"]]
    problem = err["msg"].removeprefix("Value error, ")
    return ".".join(loc) or "(root)", problem
