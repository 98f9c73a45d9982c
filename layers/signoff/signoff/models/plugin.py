"""Model providers you install: the ``signoff.models`` entry-point group.

An installed distribution declares ``myprovider = "package.module:Class"`` in the
group ``signoff.models``; ``Class`` has the built-in adapters'
``from_config(settings, agent_dir)`` (``models.factory.ModelAdapter``). An agent
then names it as any provider (``model: {provider: myprovider}``): a name
``PROVIDERS`` does not hold is looked up among the installed entry points when an
``agent.yaml`` (or ``SIGNOFF_MODEL``) is validated, and then joins ``PROVIDERS``,
so building reads it from the one table. A built-in name always wins: a
distribution cannot replace ``openai`` by declaring it. An installed provider is
retried like any provider across a network (``models.recovery.Recovering``).

This module, like the registry, imports no adapter: the class is imported when a
model is built (``models/factory.py``).
"""

from __future__ import annotations

from typing import Final

from pydantic_core import PydanticCustomError

from signoff.models.registry import PROVIDERS, Provider
from signoff.plugins import entry_point

__all__ = ["ENTRY_POINT_GROUP", "installed", "known_provider"]

ENTRY_POINT_GROUP: Final = "signoff.models"


def installed(name: str) -> Provider | None:
    """The registry entry of provider ``name``, an installed plug-in's added now; None if none.

    The installed distributions are scanned only for a name the table does not
    hold, so a deployment on built-in providers never reads their metadata.
    """
    known = PROVIDERS.get(name)
    if known is not None:
        return known
    target = entry_point(ENTRY_POINT_GROUP, name)
    if target is None:
        return None
    # setdefault: two threads finding the same plug-in agree on one entry.
    return PROVIDERS.setdefault(name, Provider(adapter=target))


def known_provider(name: str) -> str:
    """``name`` if it is a registered or installed provider.

    Raises:
        PydanticCustomError: no provider of that name; a ``ValueError`` whose message
            lists the registered ones, worded as pydantic words a ``Literal`` mismatch.
    """
    if installed(name) is None:
        *first, last = (repr(known) for known in PROVIDERS)
        expected = f"{', '.join(first)} or {last}" if first else last
        raise PydanticCustomError(
            "literal_error",
            f"Input should be {expected} (or a provider installed in the "
            f"{ENTRY_POINT_GROUP!r} entry-point group)",
        )
    return name
