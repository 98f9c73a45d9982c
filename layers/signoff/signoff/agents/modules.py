"""Importing the Python files of an agent folder (``tools.py``, ``hooks.py``)."""

from __future__ import annotations

import importlib.util
import sys
from typing import TYPE_CHECKING

from signoff.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType

__all__ = ["import_agent_file"]


def import_agent_file(path: Path, package: str, agent: str) -> ModuleType:
    """Import ``path`` as ``<package>.<agent>`` (one module per agent and file kind).

    Raises:
        ConfigError: the file cannot be imported, or running it raised.
    """
    module_name = f"{package}.{agent.replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(str(path), "", "cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # any error in user code is a config error of that file
        sys.modules.pop(module_name, None)
        raise ConfigError(str(path), "", f"import failed: {type(exc).__name__}: {exc}") from exc
    return module
