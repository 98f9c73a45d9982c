"""The model providers an agent may name in ``agent.yaml``'s ``model.provider``.

One table, ``PROVIDERS``: a provider's name → its adapter class as an import
path, imported only when an agent uses it (``models/factory.py``: a function
that runs the scripted model never loads httpx or boto3). The adapter is built
by ``from_config(settings, agent_dir)`` from the agent's ``ModelSettings``
(``models.factory.ModelAdapter``). ``agent.yaml`` validation
(``models/settings.py``), the ``SIGNOFF_MODEL`` override, ``build_model`` and
the architecture test read this table; adding a provider is one line here, or
a package installed with a ``signoff.models`` entry point (``models/plugin.py``;
see ``docs/extending.md``). The table is data: this module imports no adapter and
nothing that annotates one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["PROVIDERS", "Provider"]


@dataclass(frozen=True, kw_only=True)
class Provider:
    """One ``model.provider``: where its adapter lives and whether calls are retried."""

    adapter: str  # "package.module:Class", a models.factory.ModelAdapter
    # A provider across a network fails transiently: its calls go through Recovering
    # (retries with backoff, Retry-After honoured). A local double fails only as scripted.
    retried: bool = True


# Entries may be added at start-up: a provider installed through the ``signoff.models``
# entry-point group joins when an agent names it (models/plugin.py); nothing caches this table.
PROVIDERS: Final[dict[str, Provider]] = {
    "scripted": Provider(adapter="signoff.models.scripted:ScriptedModel", retried=False),
    "openai": Provider(adapter="signoff.models.openai:OpenAIChat"),
    "anthropic": Provider(adapter="signoff.models.anthropic:AnthropicMessages"),
    "bedrock": Provider(adapter="signoff.models.bedrock:BedrockConverse"),
}
