"""The secret-source port; adapters ``env``, ``memory`` and ``aws`` are imported where wired."""

from __future__ import annotations

from signoff.secrets.base import SecretSource

__all__ = ["SecretSource"]
