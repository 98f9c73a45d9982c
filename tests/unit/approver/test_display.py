"""``visible``: every hidden character escaped, everything else left as it is."""

from __future__ import annotations

import pytest

from signoff.approver.display import visible

BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]
ZERO_WIDTH = [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E]
CONTROLS = [*range(0x00, 0x09), 0x0B, 0x0C, 0x0D, *range(0x0E, 0x20), *range(0x7F, 0xA0)]
OTHER = [0x2028, 0x2029, 0x00AD, 0x3164, 0x115F, 0xFFA0, 0x034F, 0xE0001, 0xE0041]


@pytest.mark.parametrize("code", BIDI + ZERO_WIDTH + CONTROLS + OTHER, ids=lambda c: f"U+{c:04X}")
def test_each_hidden_character_is_shown_as_its_escape(code: int) -> None:
    escape = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"

    assert visible(f"a{chr(code)}b") == f"a{escape}b"


def test_newline_and_tab_stay_in_multi_line_text_and_are_escaped_in_one_line() -> None:
    assert visible("a\n\tb") == "a\n\tb"
    assert visible("a\r\nb\rc") == "a\nb\\u000dc"
    assert visible("a\n\tb", lines=False) == "a\\u000a\\u0009b"


@pytest.mark.parametrize(
    "text",
    [
        "refund 12.50 to A-1001",
        "Zahlung an Müller — «ok» ½",
        "张三 李四 مرحبا שלום",  # right-to-left scripts themselves are not hidden
        "\u2764\ufe0f \U0001f44d\U0001f3fd \U0001f468\u200d\U0001f469",  # emoji sequences
        "a\\u202eb",  # a backslash sequence typed as text is text
    ],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    shown = visible(text)

    if "\u200d" in text:  # a zero-width joiner is hidden, even inside an emoji sequence
        assert shown == text.replace("\u200d", "\\u200d")
    else:
        assert shown == text
