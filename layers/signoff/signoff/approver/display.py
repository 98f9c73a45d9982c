"""Text as an approver must see it: invisible and direction-changing characters escaped.

Tool arguments, questions and reasons come from a model, and through it from
whoever wrote what the model read. A right-to-left override (U+202E) shows the
rest of a value reversed (``acct`` U+202E ``4321`` reads as ``acct1234``);
zero-width characters hide text or make two equal-looking strings differ;
control characters move the cursor or end a line in some clients. Before any of that
reaches an approver — a link page, an email, a Slack or Lark card — each such
character is shown as its escape, ``\\u202e``, and the rest of the text is left
as it is (any script, emoji, punctuation). The HTML, mrkdwn or plain-text
escaping of each surface stays its own and comes after this.

What counts as hidden: the Unicode categories Cc (C0 and C1 controls, DEL), Cf
(format: the bidi embeddings, overrides and isolates U+202A-202E and
U+2066-2069, the marks U+200E/U+200F/U+061C, zero-width U+200B-200D, U+2060,
U+FEFF, the tag characters U+E0000-E007F, …), Cs (lone surrogates), Zl and Zp
(line and paragraph separators), and the few default-ignorable letters that
render as nothing (the Hangul fillers, U+034F, U+17B4/5). Newline and tab stay
as they are unless the text is one line (``lines=False``); so does a CRLF line
break, shown as a newline (a lone CR, which overwrites a line in a terminal, is
escaped).

The playground (``local/static/playground.js``) applies the same rule in the browser.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Final

__all__ = ["visible"]

_HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Letters and marks that are default-ignorable: they take no space on screen.
_BLANK: Final = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
_LAYOUT: Final = frozenset("\n\t")


@lru_cache(maxsize=4096)
def _hidden(char: str) -> bool:
    return char in _BLANK or unicodedata.category(char) in _HIDDEN_CATEGORIES


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str, *, lines: bool = True) -> str:
    """``text`` with every hidden character replaced by its ``\\uXXXX`` escape.

    Args:
        text: what a model or a person wrote.
        lines: keep newlines and tabs (multi-line text); False escapes them too.
    """
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to look at
    if lines:
        text = text.replace("\r\n", "\n")
    return "".join(
        _escaped(char) if _hidden(char) and not (lines and char in _LAYOUT) else char
        for char in text
    )
