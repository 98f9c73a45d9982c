"""``model:`` in ``agent.yaml``: which provider and model an agent talks to.

It lives beside the providers, not in ``agents/``: the adapters build themselves
from it (``from_config(settings, agent_dir)``), and the agents' configuration
only embeds it, so ``agents`` depends on ``models`` and never the other way.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from signoff.models.plugin import known_provider

__all__ = ["ModelSettings"]


class ModelSettings(BaseModel):
    """Which model an agent talks to. ``script`` is for the scripted provider."""

    # As every agent.yaml section: unknown keys refused, camelCase or snake_case keys.
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )

    provider: Annotated[str, AfterValidator(known_provider)] = "scripted"  # PROVIDERS' names
    model: str = "script"
    script: str = "script.yaml"
    base_url: str | None = None
    api_key_env: str | None = None
    region: str | None = None
    max_tokens: int = Field(default=1024, gt=0)
