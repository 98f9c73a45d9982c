"""The secret-source port: named secrets, read when needed, never logged."""

from __future__ import annotations

from typing import Protocol

__all__ = ["SecretSource"]


class SecretSource(Protocol):
    def get(self, name: str, *, fresh: bool = False) -> str:
        """The current value of the secret ``name`` (e.g. ``"resume-signing"``).

        An empty value counts as missing: no secret is legitimately empty. A source
        that caches reads past its cache when ``fresh`` (a rotation must reach a
        warm function before the cache would expire).

        Raises:
            SecretMissing: no usable secret of that name.
            StoreUnavailable: the source failed transiently; retrying may succeed.
        """
