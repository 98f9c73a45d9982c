"""The model providers an agent may name in ``agent.yaml``'s ``model.provider``.

One table, ``PROVIDERS``: a provider's name → its adapter class as an import
path, imported only when an agent uses it (a function that runs the scripted
model never loads httpx or boto3). The adapter is built by
``from_config(settings, agent_dir)`` from the agent's ``ModelSettings``
(``ModelAdapter``). ``agent.yaml`` validation, the ``SIGNOFF_MODEL`` override,
``build_model`` and the architecture test read this table; adding a provider is
one line here (see ``docs/extending.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from pydantic_core import PydanticCustomError

from signoff.plugins import load

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.agents.config import ModelSettings
    from signoff.models.base import ModelCall

__all__ = ["PROVIDERS", "ModelAdapter", "Provider", "known_provider"]


class ModelAdapter(Protocol):
    """What a provider's adapter class offers the registry: a classmethod building it."""

    def from_config(self, settings: ModelSettings, agent_dir: Path) -> ModelCall:
        """The model client for an agent's ``settings`` (``agent_dir`` holds its files).

        Raises:
            ConfigError: the settings or a file they name are unusable.
        """
        ...


@dataclass(frozen=True, kw_only=True)
class Provider:
    """One ``model.provider``: where its adapter lives and whether calls are retried."""

    adapter: str  # "package.module:Class", a ModelAdapter
    # A provider across a network fails transiently: its calls go through Recovering
    # (retries with backoff, Retry-After honoured). A local double fails only as scripted.
    retried: bool = True

    def adapter_class(self) -> ModelAdapter:
        """The adapter class, imported now (with the client library it needs)."""
        cls: ModelAdapter = load(self.adapter)
        return cls


# Entries may be added at start-up (a plug-in's provider); nothing caches this table.
PROVIDERS: Final[dict[str, Provider]] = {
    "scripted": Provider(adapter="signoff.models.scripted:ScriptedModel", retried=False),
    "openai": Provider(adapter="signoff.models.openai:OpenAIChat"),
    "anthropic": Provider(adapter="signoff.models.anthropic:AnthropicMessages"),
    "bedrock": Provider(adapter="signoff.models.bedrock:BedrockConverse"),
}


def known_provider(name: str) -> str:
    """``name`` if it is a registered provider.

    Raises:
        PydanticCustomError: no provider of that name; a ``ValueError`` whose message
            lists them, worded as pydantic words a ``Literal`` mismatch.
    """
    if name not in PROVIDERS:
        *first, last = (repr(known) for known in PROVIDERS)
        expected = f"{', '.join(first)} or {last}" if first else last
        raise PydanticCustomError("literal_error", f"Input should be {expected}")
    return name
