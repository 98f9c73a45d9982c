"""A mkdocs hook: the reStructuredText ``::`` before a literal block, as Markdown reads it.

The engine's docstrings introduce an example with ``::`` (a paragraph of its own, or
ending one), as reStructuredText does; the indented block after it is already code in
Markdown, so the API reference pages drop the marker (or keep one colon of it).
"""

from __future__ import annotations

import re
from typing import Any

_ALONE = re.compile(r"<p>::</p>\n?")
_ENDING = re.compile(r"::</p>")


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    if not page.file.src_uri.startswith("reference/"):
        return html
    return _ENDING.sub(":</p>", _ALONE.sub("", html))
