"""``model:`` in ``agent.yaml``: which provider and model an agent talks to.

It lives beside the providers, not in ``agents/``: the adapters build themselves
from it (``from_config(settings, agent_dir)``), and the agents' configuration
only embeds it, so ``agents`` depends on ``models`` and never the other way.
"""

from typing import Annotated, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from signoff.models.plugin import known_provider

__all__ = [
    "KEYED_PROVIDERS",
    "OPENAI_ONLY",
    "ApiKeySecret",
    "MaxTokensField",
    "ModelSettings",
    "ReasoningEffort",
]

# How an OpenAI-compatible server is told the output limit: reasoning models (o-series,
# gpt-5) refuse "max_tokens"; older compatible servers know only it.
MaxTokensField = Literal["max_tokens", "max_completion_tokens"]
# OpenAI's reasoning_effort values; which ones a model accepts is the model's to say.
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
# Settings only the Chat Completions adapter reads: set for another built-in provider
# they would be ignored silently, so they are refused there.
OPENAI_ONLY = ("max_tokens_field", "reasoning_effort")
_NOT_OPENAI = frozenset({"scripted", "anthropic", "bedrock"})
# The providers whose key apiKey may name (Bedrock signs with the function's role).
KEYED_PROVIDERS = frozenset({"openai", "anthropic"})


class ApiKeySecret(BaseModel):
    """``apiKey: {secret: NAME}``: the key is the secret's value, never the config's.

    ``NAME`` is a secret's name in the deployment's secret source (on AWS, Secrets
    Manager's ``<stack>/NAME``; locally ``SIGNOFF_SECRET_<NAME>``) or a Secrets
    Manager ARN.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    secret: str = Field(min_length=1)


class ModelSettings(BaseModel):
    """Which model an agent talks to. ``script`` is for the scripted provider."""

    # As every agent.yaml section: unknown keys refused, camelCase or snake_case keys.
    model_config = ConfigDict(
        defer_build=True,
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
    )

    provider: Annotated[str, AfterValidator(known_provider)] = "scripted"  # PROVIDERS' names
    model: str = "script"
    script: str = "script.yaml"
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: ApiKeySecret | None = None
    region: str | None = None
    max_tokens: int = Field(default=1024, gt=0)
    # None: chosen from the model's name (models/openai.py).
    max_tokens_field: MaxTokensField | None = None
    reasoning_effort: ReasoningEffort | None = None

    @model_validator(mode="after")
    def _one_key_source(self) -> Self:
        if self.api_key is None:
            return self
        if self.api_key_env is not None:
            raise ValueError("apiKey and apiKeyEnv both name the key: write one")
        if self.provider in _NOT_OPENAI - KEYED_PROVIDERS:
            raise ValueError(
                f"apiKey applies to the openai and anthropic providers, not {self.provider!r}"
            )
        return self

    @model_validator(mode="after")
    def _openai_settings_need_openai(self) -> Self:
        for name in OPENAI_ONLY:
            if getattr(self, name) is not None and self.provider in _NOT_OPENAI:
                field = to_camel(name)
                raise ValueError(f"{field} applies to the openai provider, not {self.provider!r}")
        return self
