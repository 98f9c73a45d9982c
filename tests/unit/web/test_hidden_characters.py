"""Approvers see the text as it is: a right-to-left override, zero-width and control
characters in arguments, questions, options and reasons appear escaped (``\\u202e``) on
the link page, in both parts of an email, and in Slack and Lark cards."""

from __future__ import annotations

import json
from html import unescape
from typing import Any

import pytest

from signoff.channels.email import render
from signoff.channels.lark.channel import render_card
from signoff.channels.slack.channel import render_blocks
from signoff.web import confirmation_page
from tests.support.chat import APPROVAL, QUESTION
from tests.unit.web.test_pages import ACTION, TOKEN, approval, question

RLO, ZWSP, PDF, NEL, TAG_A = "\u202e", "\u200b", "\u202c", "\u0085", "\U000e0041"
# Shown as "acct1234", it is "acct" + RLO + "4321": the digits read reversed.
ACCOUNT = f"acct{RLO}4321{PDF}"
HIDDEN = (RLO, ZWSP, PDF, NEL, TAG_A)
SHOWN = (r"acct\u202e4321\u202c", r"\u200b", r"\u0085", r"\U000e0041")

ARGS = {"account": ACCOUNT, f"amount{ZWSP}": f"5{NEL}000", "memo": f"ok{TAG_A}"}
REASON = f"refunds over {RLO}0005 need a human"
ASKED = f"Refund to {ACCOUNT}?"
OPTIONS = [f"yes {ACCOUNT}", f"no{ZWSP}"]


def assert_escaped(shown: str) -> None:
    for char in HIDDEN:
        assert char not in shown, f"U+{ord(char):04X} reaches the approver unescaped"
    for escaped in SHOWN:
        assert escaped in shown, escaped


def test_the_link_page_shows_arguments_and_reason_escaped() -> None:
    page = confirmation_page(
        approval(args=ARGS, reason=REASON), TOKEN, action_path=ACTION, expires_text="in 1 hour"
    )

    assert_escaped(unescape(page))
    assert r"over \u202e0005" in unescape(page)


def test_the_question_page_shows_question_and_options_escaped_and_answers_with_the_option() -> None:
    page = confirmation_page(
        question(question=ASKED, options=OPTIONS), TOKEN, action_path=ACTION, expires_text="soon"
    )

    shown = unescape(page).replace(f'value="{OPTIONS[0]}"', "").replace(f'value="{OPTIONS[1]}"', "")
    assert RLO not in shown and ZWSP not in shown and PDF not in shown
    assert r"Refund to acct\u202e4321\u202c?" in shown and r"no\u200b" in shown
    # the choice submits the option as the model offered it
    assert f'value="{OPTIONS[0]}"' in unescape(page)


def texts(card: Any) -> str:
    """Every string of a card (Block Kit or Lark JSON), one a line, as the app shows them."""
    if isinstance(card, str):
        return card
    if isinstance(card, dict):
        card = list(card.values())
    return "\n".join(texts(part) for part in card) if isinstance(card, list) else ""


def test_an_email_shows_arguments_escaped_in_text_and_html() -> None:
    text, html_part = render(APPROVAL.model_copy(update={"args": ARGS, "body": REASON}))

    assert_escaped(text)
    assert_escaped(unescape(html_part))


def test_an_email_shows_a_question_its_options_and_the_subject_escaped() -> None:
    text, html_part = render(
        QUESTION.model_copy(update={"question": ASKED, "options": OPTIONS, "title": ASKED})
    )

    for part in (text, unescape(html_part)):
        assert RLO not in part and ZWSP not in part
        assert r"Refund to acct\u202e4321\u202c?" in part and r"no\u200b" in part


def test_a_slack_card_shows_arguments_title_and_options_escaped() -> None:
    approval_blocks = render_blocks(APPROVAL.model_copy(update={"args": ARGS, "body": REASON}))
    question_blocks = render_blocks(
        QUESTION.model_copy(update={"question": ASKED, "options": OPTIONS, "title": ASKED})
    )

    assert_escaped(texts(approval_blocks))
    shown = texts(question_blocks)
    labels = [
        element["text"]["text"]
        for block in question_blocks
        if block["type"] == "actions"
        for element in block["elements"]
    ]
    assert r"yes acct\u202e4321\u202c" in labels and r"no\u200b" in labels
    assert r"Refund to acct\u202e4321\u202c?" in shown
    # a button's value is the answer itself, kept as the model offered it
    values = [json.loads(v)["answer"] for v in _button_values(question_blocks)]
    assert values == OPTIONS


def _button_values(blocks: list[dict[str, Any]]) -> list[str]:
    return [
        element["value"]
        for block in blocks
        if block["type"] == "actions"
        for element in block["elements"]
        if element["action_id"].startswith("signoff_answer")
    ]


def test_a_lark_card_shows_arguments_title_and_options_escaped() -> None:
    card = render_card(APPROVAL.model_copy(update={"args": ARGS, "body": REASON, "title": ASKED}))
    asked = render_card(QUESTION.model_copy(update={"question": ASKED, "options": OPTIONS}))

    assert_escaped(texts(card))
    labels = [
        action["text"]["content"]
        for element in asked["elements"]
        if element["tag"] == "action"
        for action in element["actions"]
    ]
    assert r"yes acct\u202e4321\u202c" in labels and r"no\u200b" in labels
    answers = [
        a["value"]["answer"]
        for e in asked["elements"]
        if e["tag"] == "action"
        for a in e["actions"]
        if "value" in a
    ]
    assert answers == OPTIONS


@pytest.mark.parametrize("surface", ["page", "email", "slack", "lark"])
def test_ordinary_text_is_left_as_it_is(surface: str) -> None:
    text = "Zahlung an Müller — 张三, ❤️, 12.50 €\nsecond line"
    item, note = approval(args={"memo": text}), APPROVAL.model_copy(update={"args": {"memo": text}})
    shown = {
        "page": lambda: unescape(
            confirmation_page(item, TOKEN, action_path=ACTION, expires_text="x")
        ),
        "email": lambda: render(note)[0],
        "slack": lambda: texts(render_blocks(note)),
        "lark": lambda: texts(render_card(note)),
    }[surface]()

    assert "Zahlung an Müller — 张三, ❤️, 12.50 €" in shown
