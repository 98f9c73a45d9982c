"""Secrets held in a dict: tests and the CLI."""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.errors import SecretMissing

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["MemorySecrets"]


class MemorySecrets:
    """A fixed set of named secrets; ``set`` replaces one, as a rotation would."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values = dict(values or {})

    def get(self, name: str, *, fresh: bool = False) -> str:
        """The value of ``name`` (nothing is cached, so ``fresh`` changes nothing).

        Raises:
            SecretMissing: no such secret, or it is empty.
        """
        value = self._values.get(name)
        if not value:
            raise SecretMissing(name)
        return value

    def set(self, name: str, value: str) -> None:
        """Store or replace the secret ``name``."""
        self._values[name] = value
