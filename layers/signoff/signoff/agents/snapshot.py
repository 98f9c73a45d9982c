"""The build-time snapshot of the agents' YAML (``signoff.yamldocs``), written by ``make build``."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from signoff import yamldocs
from signoff.agents.loader import AgentCatalog
from signoff.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["write_yaml_snapshot"]


def write_yaml_snapshot(root: Path) -> int:
    """Write ``<root>/yaml-snapshot.json``: the parse of every YAML document a cold start
    reads under ``root``, recorded by loading the agents and their channels as
    ``checked_agents`` and the notifier do, and a scripted agent's script, which its
    first turn reads. How many parses it holds.

    A document that does not parse is left out (a cold start parses it and reports
    the error as before); ``signoff check --strict`` fails the build on it anyway.
    """
    target = root / yamldocs.SNAPSHOT_FILE
    target.unlink(missing_ok=True)
    from signoff.models.scripted import ScriptedModel

    with yamldocs.recording() as parsed:
        catalog = AgentCatalog(root)
        problems = catalog.problems()
        with suppress(ConfigError):
            catalog.channels  # noqa: B018 - the notifier reads them without the agents
        with suppress(ConfigError):
            catalog.people  # noqa: B018 - the inbox and the approvers' rules read them
        for name in catalog.names():
            model = None if name in problems else catalog.get(name).config.model
            if model is not None and model.provider == "scripted":
                with suppress(ConfigError):
                    ScriptedModel.from_config(model, root / name)
    target.write_text(yamldocs.snapshot_entries(parsed), encoding="utf-8")
    return len(parsed)
