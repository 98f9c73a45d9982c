"""Time-ordered identifiers (ULIDs): they sort by creation time, as log keys need."""

from __future__ import annotations

import os
import time

__all__ = ["new_id"]

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(now_ms: int | None = None) -> str:
    """A 26-character ULID: 48 bits of milliseconds, then 80 random bits."""
    millis = int(time.time() * 1000) if now_ms is None else now_ms
    value = (millis << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))
