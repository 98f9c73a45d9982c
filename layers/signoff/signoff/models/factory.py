"""Builds the ``ModelCall`` an agent's settings ask for, from the provider registry.

Provider adapters are imported only when chosen (``signoff.models.registry``),
so a function that runs the scripted model never loads httpx or boto3 for it.
``SIGNOFF_MODEL`` (``provider:model``, e.g. ``openai:gpt-4o-mini``) overrides
every agent's model: a real provider is one setting away. Model settings may
follow as a query string, ``openai:o4-mini?reasoningEffort=low&maxTokens=4096``:
no model id or inference-profile ARN holds a ``?``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast
from urllib.parse import parse_qsl

from pydantic import ValidationError
from pydantic.alias_generators import to_snake

from signoff.errors import ConfigError
from signoff.models.plugin import installed, known_provider
from signoff.models.settings import ModelSettings
from signoff.plugins import load
from signoff.settings import Deployment

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.models.base import ModelCall
    from signoff.secrets.base import SecretSource

__all__ = ["KeyedModelAdapter", "ModelAdapter", "build_model", "effective_settings"]


class ModelAdapter(Protocol):
    """What a provider's adapter class offers: a classmethod building it from the settings."""

    def from_config(self, settings: ModelSettings, agent_dir: Path) -> ModelCall:
        """The model client for an agent's ``settings`` (``agent_dir`` holds its files).

        Raises:
            ConfigError: the settings or a file they name are unusable.
        """
        ...


class KeyedModelAdapter(Protocol):
    """A built-in adapter that also takes its key as a value (``apiKey: {secret: …}``)."""

    def from_config(
        self, settings: ModelSettings, agent_dir: Path, *, api_key: str | None = None
    ) -> ModelCall: ...


def effective_settings(
    settings: ModelSettings, deployment: Deployment | None = None
) -> ModelSettings:
    """The agent's settings with the ``SIGNOFF_MODEL*`` overrides applied.

    ``deployment`` is read from the environment when not given.

    Raises:
        ConfigError: ``SIGNOFF_MODEL`` names no known provider, or its options or the
            settings they give are invalid.
    """
    overrides = deployment or Deployment.from_env()
    override = overrides.model_override
    if not override:
        return settings
    target, _, query = override.partition("?")
    provider, _, model = target.partition(":")
    try:
        known_provider(provider)
    except ValueError as exc:
        raise ConfigError("SIGNOFF_MODEL", "provider", f"{provider!r}: {exc}") from exc
    changes: dict[str, object] = {"provider": provider}
    if model:
        changes["model"] = model
    if base_url := overrides.model_base_url:
        changes["base_url"] = base_url
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
        options = {to_snake(key): value for key, value in pairs}
    except ValueError as exc:
        raise ConfigError("SIGNOFF_MODEL", "", f"options {query!r}: {exc}") from exc
    if {"provider", "model"} & options.keys():
        raise ConfigError("SIGNOFF_MODEL", "", "provider and model go before the '?'")
    merged = {**settings.model_dump(exclude_unset=True), **changes, **options}
    try:
        # Validated again: the options are strings from the environment, and a provider
        # swapped by the override must still suit every setting the agent kept.
        return ModelSettings.model_validate(merged)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in error["loc"])
        raise ConfigError("SIGNOFF_MODEL", field, error["msg"]) from exc


def build_model(
    settings: ModelSettings,
    agent_dir: Path,
    deployment: Deployment | None = None,
    *,
    secrets: SecretSource | None = None,
) -> ModelCall:
    """The model client for ``settings``; providers across a network are wrapped in retries.

    ``apiKey: {secret: NAME}`` is read from ``secrets`` now, at each build (a turn),
    so a rotated key reaches the next turn once the source's cache lets it; without
    a source, from ``SIGNOFF_SECRET_<NAME>`` (``EnvSecrets``: the local stack, the CLI).

    Raises:
        ConfigError: the settings or the script are missing or invalid.
        SecretMissing: the key's secret is not there or is empty.
        StoreUnavailable: the secret source failed transiently.
    """
    settings = effective_settings(settings, deployment)
    provider = installed(settings.provider)  # an installed provider joins the table here
    if provider is None:  # settings built without validation (model_construct)
        raise ConfigError("model", "provider", f"unknown provider {settings.provider!r}")
    adapter: ModelAdapter = load(provider.adapter)  # imported now, with its client library
    if settings.api_key is None:
        model = adapter.from_config(settings, agent_dir)
    else:
        if secrets is None:
            from signoff.secrets.env import EnvSecrets

            secrets = EnvSecrets()
        # Only openai and anthropic take apiKey (ModelSettings refuses it elsewhere).
        keyed = cast("KeyedModelAdapter", adapter)
        model = keyed.from_config(settings, agent_dir, api_key=secrets.get(settings.api_key.secret))
    if not provider.retried:
        return model
    from signoff.models.recovery import Recovering

    return Recovering(model)
