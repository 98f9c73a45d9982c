"""Builds the ``ModelCall`` an agent's settings ask for.

Provider adapters are imported only when chosen, so a function that runs the
scripted model never loads httpx or boto3 for it. ``SIGNOFF_MODEL``
(``provider:model``, e.g. ``openai:gpt-4o-mini``) overrides every agent's
model: a real provider is one setting away.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from signoff.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.agents.config import ModelSettings
    from signoff.models.base import ModelCall

__all__ = ["build_model", "effective_settings"]

_DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def effective_settings(settings: ModelSettings) -> ModelSettings:
    """The agent's settings with the ``SIGNOFF_MODEL*`` environment overrides applied.

    Raises:
        ConfigError: ``SIGNOFF_MODEL`` names no known provider.
    """
    override = os.environ.get("SIGNOFF_MODEL", "").strip()
    if not override:
        return settings
    provider, _, model = override.partition(":")
    if provider not in ("scripted", "openai", "anthropic", "bedrock"):
        raise ConfigError(
            "SIGNOFF_MODEL",
            "provider",
            f"{provider!r} is not scripted, openai, anthropic or bedrock",
        )
    changes: dict[str, object] = {"provider": provider}
    if model:
        changes["model"] = model
    if base_url := os.environ.get("SIGNOFF_MODEL_BASE_URL"):
        changes["base_url"] = base_url
    return settings.model_copy(update=changes)


def build_model(settings: ModelSettings, agent_dir: Path) -> ModelCall:
    """The model client for ``settings``; real providers are wrapped in retries.

    Raises:
        ConfigError: the script is missing or invalid.
    """
    settings = effective_settings(settings)
    if settings.provider == "scripted":
        from signoff.models.scripted import ScriptedModel

        return ScriptedModel.from_file(agent_dir / settings.script)

    from signoff.models.recovery import Recovering

    inner: ModelCall
    if settings.provider == "openai":
        from signoff.models.openai import OpenAIChat

        inner = OpenAIChat.from_settings(
            model=settings.model,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env or _DEFAULT_KEY_ENV["openai"],
        )
    elif settings.provider == "anthropic":
        from signoff.models.anthropic import AnthropicMessages

        inner = AnthropicMessages.from_settings(
            model=settings.model,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env or _DEFAULT_KEY_ENV["anthropic"],
        )
    else:
        from signoff.models.bedrock import BedrockConverse

        inner = BedrockConverse.from_settings(model=settings.model, region=settings.region)
    return Recovering(inner)
