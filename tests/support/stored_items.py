"""A stored item's text as a reader would see it: packed bodies unpacked.

A test that looks for (or rules out) a value in the table's raw items must read
``zbody`` through ``signoff.store.packing``: the packed bytes never contain the
text they hold, so a check on them alone would pass whatever was stored.
"""

from __future__ import annotations

import json
from typing import Any

from signoff.store import packing


def item_text(item: dict[str, Any]) -> str:
    """``item`` (as the low-level client or the resource returns it) as JSON text."""
    return json.dumps(_readable(item), default=str, ensure_ascii=False)


def _readable(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _unpacked(inner) if key == "zbody" else _readable(inner)
            for key, inner in value.items()
        }
    if isinstance(value, list):
        return [_readable(inner) for inner in value]
    return value


def _unpacked(value: Any) -> Any:
    """A ``zbody`` attribute's text, whether raw bytes, boto3's Binary or ``{"B": ...}``."""
    if isinstance(value, dict):
        value = value["B"]
    data = getattr(value, "value", value)
    return json.loads(packing.unpack(bytes(data)))
