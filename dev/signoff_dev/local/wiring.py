"""What the functions find when the local stack imports them: environment, secrets, services.

The functions' ``app.py`` build their services at the composition root
(``signoff.aws``) from the environment during their cold start, as on Lambda. So
the stack prepares that environment first: the template's variables with the
local differences, the channel secrets in the emulator's Secrets Manager, the
email senders verified with the emulator's SES.
"""

from __future__ import annotations

import base64
import os
import secrets
from typing import TYPE_CHECKING

from signoff.errors import ConfigError
from signoff_dev.local.router import RouteTable
from signoff_dev.local.sink import sink_channels, sink_webhooks
from signoff_dev.local.template import REGION, TEMPLATE_FILE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from types import ModuleType

    from signoff.api.context import Api
    from signoff.channels.config import ChannelsConfig
    from signoff_dev.local.environ import EnvironmentChanges
    from signoff_dev.local.functions import LocalFunction
    from signoff_dev.local.router import Route
    from signoff_dev.local.template import FunctionSpec

__all__ = [
    "aim_sinks",
    "capture_emails",
    "check_continuing_function",
    "export_environment",
    "message_api",
    "store_channel_secrets",
]


# Each function's own timeout (the session lease derives from it): one process runs
# them all here, so its turns take the longest, a lease none of them outlives.
_LONGEST = frozenset({"SIGNOFF_FUNCTION_TIMEOUT"})


def export_environment(
    functions: Iterable[FunctionSpec], local: Mapping[str, str], environ: EnvironmentChanges
) -> None:
    """Export every function's environment, with ``local`` over it, into this process.

    Raises:
        ConfigError: two functions give one variable different values (they share
            this process's environment).
    """
    merged: dict[str, tuple[str, str]] = {}  # variable → (value, the function setting it)
    for spec in functions:
        for name, value in {**spec.environment, **local}.items():
            if name in _LONGEST and name in merged:
                value = max(value, merged[name][0], key=float)
            elif name in merged and merged[name][0] != value:
                raise ConfigError(
                    TEMPLATE_FILE,
                    f"{spec.logical_id}.Environment.{name}",
                    f"differs from {merged[name][1]}'s; the local stack runs every "
                    "function in one process environment",
                )
            merged[name] = (value, spec.logical_id)
    for name, (value, _) in merged.items():
        environ.set(name, value)


def store_channel_secrets(
    config: ChannelsConfig,
    *,
    url: str,
    prefix: str,
    environ: EnvironmentChanges,
    say: Callable[[str], None],
) -> list[str]:
    """Store the channels' secrets under ``prefix``; the ``whsec_`` keys of the sink's channels.

    A value comes from ``SIGNOFF_SECRET_<NAME>``; a sink channel without one gets a
    fresh key, so the sink verifies what the notifier signs.
    """
    import boto3

    from signoff.aws.channels import channel_secret_names
    from signoff.channels.webhook import whsec_form
    from signoff.secrets.env import variable_name

    sink_secrets = {settings.secret.secret for settings in sink_channels(config, url).values()}
    client = boto3.client("secretsmanager", region_name=REGION)
    keys: list[str] = []
    for name in channel_secret_names(config):
        value = os.environ.get(variable_name(name))
        if not value and name in sink_secrets:
            value = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
        if not value:
            say(f"note: no value for channel secret {name!r}: set {variable_name(name)}")
            continue
        client.create_secret(Name=f"{prefix}{name}", SecretString=value)
        environ.set(variable_name(name), value)
        if name in sink_secrets:
            keys.append(whsec_form(value))
    return keys


def capture_emails(config: ChannelsConfig) -> None:
    """Verify the email channels' senders with the emulator's SES, so it takes their mail."""
    import boto3

    from signoff.channels.settings.email import EmailSettings

    senders = {s.sender for s in config.channels.values() if isinstance(s, EmailSettings)}
    ses = boto3.client("sesv2", region_name=REGION)
    for sender in sorted(senders):  # moto, like SES, refuses mail from an unverified one
        ses.create_email_identity(EmailIdentity=sender)


def check_continuing_function(functions: Iterable[FunctionSpec]) -> None:
    """Check that ``SIGNOFF_CONTINUE_FUNCTION`` names a function of the template.

    Raises:
        ConfigError: it names none, so no turn could continue.
    """
    target = os.environ.get("SIGNOFF_CONTINUE_FUNCTION", "")
    # The template names the function's alias (<stack>-message:live); locally there is
    # one version of each function, which the Invoke API runs for any qualifier.
    name = target.split(":", 1)[0]
    if name not in {spec.physical_name for spec in functions}:
        raise ConfigError(
            TEMPLATE_FILE, "SIGNOFF_CONTINUE_FUNCTION", f"{target!r} is no function of the template"
        )


def aim_sinks(functions: Iterable[LocalFunction], channels: ChannelsConfig, *, url: str) -> None:
    """Aim the notifiers' sink channels at ``url``, the port this stack listens on."""
    from signoff.channels.build import ChannelSet
    from signoff.notify.hub import Notifier

    for function in functions:
        for value in vars(function.module).values():
            if isinstance(value, Notifier):
                sinks = sink_webhooks(channels, url)
                if isinstance(value.channels, ChannelSet):
                    # the others stay unbuilt: each is built (or fails) on its own first send
                    value.channels.provide(sinks)
                else:
                    value.channels = {**value.channels, **sinks}


def message_api(routes: list[Route], functions: Mapping[str, LocalFunction]) -> Api:
    """The services of the function that serves ``POST /agents/{name}/messages``.

    Raises:
        ConfigError: no function serves that route.
    """
    from signoff.api.context import Api

    found = RouteTable(routes).match("POST", "/agents/x/messages")
    module: ModuleType | None = functions[found[0].function].module if found else None
    for value in vars(module).values() if module else ():
        if isinstance(value, Api):
            return value
    raise ConfigError(TEMPLATE_FILE, "HttpApi", "no function serves POST /agents/{name}/messages")
