"""Colour for the terminal: only on a tty, never with ``NO_COLOR`` set or ``TERM=dumb``.

Pipes, files and CI logs get plain text (https://no-color.org), so what a test or
``jq`` reads never carries escape codes.
"""

from __future__ import annotations

import os
from typing import TextIO

__all__ = ["Style", "style_for"]

_CODES = {"red": "31", "green": "32", "yellow": "33", "dim": "2", "bold": "1"}


class Style:
    """Paints text for one stream; a no-op when that stream should stay plain."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, colour: str | None) -> str:
        if not self.enabled or colour is None:
            return text
        return f"\033[{_CODES[colour]}m{text}\033[0m"


def style_for(stream: TextIO) -> Style:
    """The style for ``stream``: colour only on an interactive terminal that accepts it."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return Style(enabled=False)
    isatty = getattr(stream, "isatty", None)
    return Style(enabled=bool(isatty and isatty()))
