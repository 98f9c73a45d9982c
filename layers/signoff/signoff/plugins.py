"""Objects named by import path (``"package.module:Attr"``), loaded only when used.

The registries of extension points (model providers, channel types) name their
adapters this way, as entry points do: listing an adapter costs nothing, and a
cold start imports only the ones a deployment configures.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["entry_point", "lazy_exports", "load", "module_of"]


def load(path: str) -> Any:
    """The object ``path`` names: ``package.module:Attr`` (``Attr`` may be dotted).

    Raises:
        ValueError: ``path`` has no ``:`` between module and attribute.
        ImportError: the module cannot be imported (a library it needs is missing).
        AttributeError: the module has no such attribute.
    """
    module, _, attr = path.partition(":")
    if not module or not attr:
        raise ValueError(f"{path!r} is not 'package.module:Attr'")
    found: Any = importlib.import_module(module)
    for part in attr.split("."):
        found = getattr(found, part)
    return found


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` (PEP 562) re-exporting each name of ``homes``
    from its submodule (``name -> submodule``), imported when the name is first read.

    So importing one submodule of the package does not load the others.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return load(f"{package}.{home}:{name}")

    return __getattr__


def module_of(path: str) -> str:
    """The module part of ``package.module:Attr``."""
    return path.partition(":")[0]


def entry_point(group: str, name: str) -> str | None:
    """The target (``package.module:Attr``) of the installed entry point ``name`` in ``group``.

    Scans the installed distributions' metadata only when called: a registry asks
    only for a name it does not hold. None when no distribution declares it.
    """
    from importlib.metadata import entry_points  # only when a plug-in is looked for

    for found in entry_points(group=group, name=name):
        return str(found.value)
    return None
