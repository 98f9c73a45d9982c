"""The link pages and their forms: escaping, no script, forms that POST, cross-site refusal."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

import pytest

from signoff.errors import BadForm
from signoff.events import PendingScope
from signoff.web import (
    PAGE_HEADERS,
    already_resolved_page,
    chosen_answer,
    confirmation_page,
    error_page,
    expired_page,
    is_cross_site,
    outcome_page,
    parse_form,
    view_page,
)
from signoff.web.card_html import LOCAL_TIME_JS
from tests.support.builders import T0, pending_approval, pending_question

if TYPE_CHECKING:
    from signoff.store.pending_records import PendingItem

HOSTILE = "<script>alert(1)</script>"
TOKEN = "v1.k1.eyJhIjoiZGVjaWRlIn0.c2ln"
ACTION = "/a/v1.k1.eyJhIjoiZGVjaWRlIn0.c2ln"
SCOPE = PendingScope(tenant="acme", environment="production", agent="refunds")


def approval(**changes: Any) -> PendingItem:
    item = pending_approval(session_id="s-42", call_id="call-1", scope=SCOPE)
    return item.model_copy(update=changes)


def question(**changes: Any) -> PendingItem:
    return pending_question(session_id="s-42", call_id="call-1").model_copy(update=changes)


def resolved(item: PendingItem, status: str, **changes: Any) -> PendingItem:
    update = {
        "status": status,
        "resolved_by": "ana@example.com",
        "resolved_via": "email",
        "resolved_at": T0 + 60,
        **changes,
    }
    return item.model_copy(update=update)


class Outline(HTMLParser):
    """What a page is made of: tags with attributes, and its visible text."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]

    @property
    def visible(self) -> str:
        return " ".join(" ".join(self.text).split())


def every_page(item: PendingItem | None = None) -> list[str]:
    hostile = item or approval(tool=HOSTILE, args={HOSTILE: HOSTILE}, reason=HOSTILE)
    return [
        confirmation_page(hostile, TOKEN, action_path=ACTION, expires_text=HOSTILE),
        confirmation_page(
            question(question=HOSTILE, options=[HOSTILE, '"><b>x']),
            TOKEN,
            action_path=ACTION,
            expires_text="in 1 hour",
        ),
        outcome_page(resolved(hostile, "approved", resolved_by=HOSTILE, note=HOSTILE)),
        outcome_page(resolved(question(question=HOSTILE), "answered", answer=HOSTILE)),
        expired_page(hostile),
        expired_page(None),
        already_resolved_page(resolved(hostile, "denied", resolved_via=HOSTILE)),
        error_page(404, HOSTILE, HOSTILE),
        view_page(hostile, expires_text=HOSTILE),
        view_page(question(question=HOSTILE, options=[HOSTILE, '"><b>x']), expires_text=HOSTILE),
    ]


@pytest.mark.parametrize("page", every_page(), ids=lambda _: "")
def test_no_page_has_a_script_but_the_local_time_one_or_an_unescaped_hostile_value(
    page: str,
) -> None:
    # the one script is a constant (allowed by its hash): it only adds the local time
    assert re.findall(r"<script[^>]*>(.*?)</script>", page, re.DOTALL | re.I) == [LOCAL_TIME_JS]
    page = page.replace(f"<script>{LOCAL_TIME_JS}</script>", "")
    assert "<script" not in page.lower()
    assert "<b>" not in page
    assert " on" not in re.sub(r">[^<]*<", "><", page)  # no event-handler attributes
    assert "javascript:" not in page.lower()


@pytest.mark.parametrize("page", every_page(), ids=lambda _: "")
def test_every_page_is_a_complete_accessible_document(page: str) -> None:
    outline = Outline(page)

    assert page.startswith("<!DOCTYPE html>")
    assert outline.all("html") == [{"lang": "en"}]
    assert len(outline.all("main")) == 1
    assert len(outline.all("h1")) == 1
    assert {"name": "viewport", "content": "width=device-width, initial-scale=1"} in outline.all(
        "meta"
    )
    # nothing loaded from anywhere: no external stylesheet, image, frame or script source
    assert not [attrs for _, attrs in outline.tags if "src" in attrs]
    assert outline.all("link") == []


@pytest.mark.parametrize("page", every_page(), ids=lambda _: "")
def test_every_input_is_labelled_and_every_button_has_text(page: str) -> None:
    labelled = {attrs["for"] for attrs in Outline(page).all("label")}
    fields = [
        attrs
        for name, attrs in Outline(page).tags
        if name in {"input", "textarea"} and attrs.get("type") != "hidden"
    ]

    assert all(field["id"] in labelled for field in fields)
    for button in re.findall(r"<button[^>]*>(.*?)</button>", page):
        assert button.strip()


def test_the_hostile_values_are_shown_as_text() -> None:
    item = approval(tool=HOSTILE, args={"note": HOSTILE}, reason=HOSTILE)

    page = confirmation_page(item, TOKEN, action_path=ACTION, expires_text="in 1 hour")

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # the summary (tool and argument) in the title and the heading, the reason, the
    # arguments and the tool name above them: as text, each time
    assert Outline(page).visible.count(HOSTILE) == 7


def test_an_approval_page_shows_what_is_asked_and_posts_approve_or_deny() -> None:
    page = confirmation_page(approval(), TOKEN, action_path=ACTION, expires_text="in 1 hour")
    outline = Outline(page)

    text = outline.visible
    for shown in ("refund", "refunds need a human", "acme", "production", "refunds", "s-42"):
        assert shown in text
    assert "in 1 hour" in text
    assert "2026-01-01 00:00 UTC" in text
    assert outline.all("form") == [{"method": "post", "action": ACTION}]
    assert {"type": "hidden", "name": "token", "value": TOKEN} in outline.all("input")
    buttons = {(attrs["name"], attrs["value"]) for attrs in outline.all("button")}
    assert buttons == {("decision", "approve"), ("decision", "deny")}
    assert all(attrs["type"] == "submit" for attrs in outline.all("button"))


def test_the_arguments_are_pretty_printed_in_a_pre() -> None:
    page = confirmation_page(approval(), TOKEN, action_path=ACTION, expires_text="soon")

    pre = re.search(r"<pre>(.*?)</pre>", page, re.DOTALL)

    assert pre is not None
    assert html.unescape(pre.group(1)) == '{\n  "amount": 25,\n  "order": "A-17"\n}'


def test_the_scope_falls_back_to_the_items_own_tenant_and_environment() -> None:
    page = confirmation_page(
        approval(scope=None, tenant="globex"), TOKEN, action_path=ACTION, expires_text="soon"
    )

    assert "globex" in Outline(page).visible


def test_a_question_page_offers_the_options_as_radios_and_a_free_text_answer() -> None:
    page = confirmation_page(question(), TOKEN, action_path=ACTION, expires_text="in 1 hour")
    outline = Outline(page)

    assert "Which warehouse ships it?" in outline.visible
    radios = [attrs for attrs in outline.all("input") if attrs.get("type") == "radio"]
    assert [(attrs["name"], attrs["value"]) for attrs in radios] == [
        ("choice", "Berlin"),
        ("choice", "Lyon"),
    ]
    assert [attrs["name"] for attrs in outline.all("textarea")] == ["answer"]
    assert outline.all("form") == [{"method": "post", "action": ACTION}]
    assert [(a["name"], a["value"]) for a in outline.all("button")] == [("decision", "answer")]
    assert len(outline.all("fieldset")) == 1
    assert "Choose an answer" in outline.visible


def test_a_question_without_options_has_only_the_free_text_answer() -> None:
    page = confirmation_page(question(options=None), TOKEN, action_path=ACTION, expires_text="x")
    outline = Outline(page)

    assert [attrs for attrs in outline.all("input") if attrs.get("type") == "radio"] == []
    assert outline.all("fieldset") == []
    assert "Your answer" in outline.visible


@pytest.mark.parametrize(
    "item", [approval(), question(), question(options=None)], ids=["approval", "options", "written"]
)
def test_a_view_page_shows_what_is_asked_and_has_nothing_to_submit(item: PendingItem) -> None:
    outline = Outline(view_page(item, expires_text="in 1 hour"))

    assert outline.all("form") == outline.all("input") == outline.all("button") == []
    assert outline.all("textarea") == []
    assert "in 1 hour" in outline.visible and "only shows the request" in outline.visible
    asked = item.tool if item.kind == "approval" else item.question
    assert asked and asked in outline.visible
    for option in item.options or []:
        assert option in outline.visible


@pytest.mark.parametrize(
    ("status", "title"),
    [("approved", "Approved"), ("denied", "Denied")],
)
def test_the_outcome_page_says_what_was_decided_by_whom_and_when(status: str, title: str) -> None:
    page = outcome_page(resolved(approval(), status))
    text = Outline(page).visible

    assert f"<h1>{title}</h1>" in page
    assert "ana@example.com" in text
    assert "email" in text
    assert "2026-01-01 00:01 UTC" in text
    assert "<form" not in page


def test_the_outcome_page_names_the_decider_and_channel_in_one_sentence() -> None:
    by_mail = Outline(
        outcome_page(resolved(approval(), "approved", resolved_via="ops-mail"))
    ).visible
    by_link = Outline(outcome_page(resolved(approval(), "denied", resolved_by="link"))).visible

    assert (
        "Approved by ana@example.com through the ops-mail channel, 2026-01-01 00:01 UTC" in by_mail
    )
    # a link that names nobody says so, instead of "By: link / Via: link"
    assert "Denied through a link that names no person, 2026-01-01 00:01 UTC" in by_link
    assert "By" not in by_link.split() and "Via" not in by_link.split()


def test_the_outcome_of_a_question_shows_the_answer() -> None:
    page = outcome_page(resolved(question(), "answered", answer="Lyon"))

    assert "<h1>Answered</h1>" in page
    assert "Lyon" in Outline(page).visible


def test_the_already_resolved_page_shows_the_current_state_and_who_resolved_it() -> None:
    page = already_resolved_page(resolved(approval(), "denied", resolved_by="bo@example.com"))
    text = Outline(page).visible

    assert "denied" in text
    assert "bo@example.com" in text
    assert "nothing you do here changes it" in text
    assert "<form" not in page


def test_an_item_the_sweeper_expired_shows_the_expired_page_when_clicked_again() -> None:
    item = approval(status="expired")

    assert already_resolved_page(item) == expired_page(item)


def test_an_expired_item_shows_what_it_was_about_and_when_it_expired() -> None:
    page = expired_page(approval())
    text = Outline(page).visible

    assert "refund" in text
    assert "2026-01-01 01:00 UTC" in text
    assert "<form" not in page


def test_an_expired_link_without_an_item_still_renders() -> None:
    page = expired_page(None)

    assert "This link has expired" in Outline(page).visible


def test_the_error_page_names_the_status() -> None:
    page = error_page(410, "Gone", "This request no longer exists.")

    assert "<h1>Gone</h1>" in page
    assert "410" in Outline(page).visible


def test_the_headers_allow_exactly_the_pages_inline_stylesheet() -> None:
    page = error_page(400, "Bad", "bad")
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL)
    assert style is not None
    digest = base64.b64encode(hashlib.sha256(style.group(1).encode()).digest()).decode()

    policy = PAGE_HEADERS["Content-Security-Policy"]

    assert f"style-src 'sha256-{digest}'" in policy
    assert "default-src 'none'" in policy
    script = LOCAL_TIME_JS.encode()
    assert f"script-src 'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'" in (
        policy
    )
    assert PAGE_HEADERS["Referrer-Policy"] == "same-origin"
    assert PAGE_HEADERS["Cache-Control"] == "no-store"


# -- forms --------------------------------------------------------------------------


def test_a_form_body_parses_to_one_value_per_field() -> None:
    body = "token=v1.k1.abc.def&decision=approve&answer=caf%C3%A9+au+lait&choice="

    assert parse_form(body) == {
        "token": "v1.k1.abc.def",
        "decision": "approve",
        "answer": "café au lait",
        "choice": "",
    }


def test_an_empty_body_is_an_empty_form() -> None:
    assert parse_form("") == {}


@pytest.mark.parametrize(
    "body",
    [
        "decision=approve&decision=deny",
        "decision=approve&token=a&decision=approve",
        "token",
        "a=1&&b=2",
        "=x",
        "answer=%ff",
        "&".join(f"f{n}=1" for n in range(50)),
    ],
    ids=["repeated", "repeated-same", "no-equals", "empty-pair", "no-name", "not-utf8", "many"],
)
def test_a_malformed_form_is_refused(body: str) -> None:
    with pytest.raises(BadForm):
        parse_form(body)


def test_a_repeated_field_is_named() -> None:
    with pytest.raises(BadForm) as caught:
        parse_form("decision=approve&decision=deny")

    assert caught.value.field == "decision"


@pytest.mark.parametrize(
    ("form", "answer"),
    [
        ({"choice": "Lyon", "answer": ""}, "Lyon"),
        ({"choice": "Lyon", "answer": "  Berlin, by Friday "}, "Berlin, by Friday"),
        ({"answer": "Berlin"}, "Berlin"),
        ({"choice": "Lyon"}, "Lyon"),
    ],
)
def test_the_written_answer_wins_over_the_chosen_option(form: dict[str, str], answer: str) -> None:
    assert chosen_answer(form) == answer


@pytest.mark.parametrize("form", [{}, {"answer": "   ", "choice": ""}, {"decision": "answer"}])
def test_a_question_form_without_any_answer_is_refused(form: dict[str, str]) -> None:
    with pytest.raises(BadForm):
        chosen_answer(form)


HOST = "approve.example.com"


@pytest.mark.parametrize(
    ("headers", "cross"),
    [
        ({}, False),
        ({"Sec-Fetch-Site": "same-origin"}, False),
        ({"sec-fetch-site": "none"}, False),
        ({"SEC-FETCH-SITE": "Same-Origin"}, False),
        ({"Sec-Fetch-Site": "cross-site"}, True),
        ({"sec-fetch-site": "same-site"}, True),
        ({"Sec-Fetch-Site": ""}, True),
        ({"Origin": "https://approve.example.com"}, False),
        ({"origin": "https://APPROVE.example.com"}, False),
        ({"Origin": "https://approve.example.com:443"}, False),
        ({"Origin": "https://evil.example"}, True),
        ({"Origin": "https://approve.example.com.evil.example"}, True),
        ({"Origin": "https://approve.example.com:8443"}, True),
        ({"Origin": "null"}, True),
        ({"Origin": "https://approve.example.com:99999"}, True),
        ({"Origin": "ftp://approve.example.com"}, True),
        ({"sec-fetch-site": "same-origin", "origin": "https://evil.example"}, True),
        ({"sec-fetch-site": "cross-site", "origin": "https://approve.example.com"}, True),
        ({"sec-fetch-site": "same-origin", "origin": "https://approve.example.com"}, False),
        ({"Referer": "https://evil.example/", "Content-Type": "text/plain"}, False),
    ],
)
def test_cross_site_posts_are_recognised(headers: dict[str, str], cross: bool) -> None:
    assert is_cross_site(headers, HOST) is cross


@pytest.mark.parametrize(
    ("origin", "host", "cross"),
    [
        ("http://localhost:3000", "localhost:3000", False),
        ("http://localhost:3000", "localhost:3001", True),
        ("http://127.0.0.1", "127.0.0.1:80", False),
        ("https://approve.example.com", "approve.example.com:443", False),
        ("https://approve.example.com", "approve.example.com:bad", True),
    ],
)
def test_the_origin_is_compared_with_the_host_and_its_port(
    origin: str, host: str, cross: bool
) -> None:
    assert is_cross_site({"origin": origin}, host) is cross
