"""The link pages: plain HTML a person sees after clicking an emailed or posted link.

No external assets, and no script but one constant that adds the reader's local
time beside each UTC time (``signoff.web.card_html``): a GET renders a page, and
only its form's POST decides (``DESIGN.md`` §4). An approval is shown as its
decision card (``signoff.approver.card``). Every interpolated value goes through
``html.escape``, since tool names, arguments and questions come from a model,
and what is shown through ``signoff.approver.display.visible`` first: a bidi override or
a zero-width character appears as its ``\\u202e`` escape, never acts on the text.
Serve each page with ``PAGE_HEADERS``: its policy allows this module's one
inline stylesheet and that one script, by their hashes, and nothing else.

The forms post ``token`` and ``decision`` (``approve``, ``deny`` or ``answer``);
a question's form adds ``choice`` (a radio option) and ``answer`` (free text) —
``signoff.web.forms.chosen_answer`` picks between them; an approval's adds
``reason`` and an editable tool's ``arg.<name>`` fields
(``signoff.web.decision_form``).
"""

from __future__ import annotations

import base64
import hashlib
import json
from html import escape
from typing import TYPE_CHECKING, Final

from signoff.approver.card import decided_line
from signoff.approver.display import visible
from signoff.approver.edits import describe_changes
from signoff.notify.compose import card_of
from signoff.web.card_html import CARD_CSS, LOCAL_TIME_JS, SCRIPT_HASH, approval_card, time_html
from signoff.web.decision_form import decision_fields

if TYPE_CHECKING:
    from signoff.store.pending_records import PendingItem

__all__ = [
    "PAGE_HEADERS",
    "already_resolved_page",
    "already_voted_page",
    "confirmation_page",
    "decided_by",
    "error_page",
    "expired_page",
    "outcome_page",
    "page_headers",
    "view_page",
    "vote_page",
]

# Contrast: body text 16:1, muted text 9.7:1, every button's white text ≥ 6.5:1.
_CSS: Final = (
    "*{box-sizing:border-box}"
    "body{margin:0;font:1rem/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
    "color:#1a1a1a;background:#fff}"
    "main{max-width:40rem;margin:0 auto;padding:1rem}"
    "h1{font-size:1.4rem;line-height:1.3;margin:.5rem 0 1rem}"
    "h2{font-size:1.1rem;margin:1.25rem 0 .5rem}"
    "dl{margin:0 0 1rem}dt{font-weight:600;margin-top:.5rem}"
    "dd{margin:0;overflow-wrap:anywhere}"
    "pre{background:#f3f3f3;border:1px solid #767676;padding:.75rem;margin:0 0 1rem;"
    "white-space:pre-wrap;overflow-wrap:anywhere;font-size:.9rem}"
    "fieldset{border:1px solid #767676;margin:0 0 1rem;padding:.5rem .75rem}"
    "label{display:block;padding:.25rem 0}"
    "textarea,input[type=text]{display:block;width:100%;font:inherit;padding:.5rem;"
    "border:1px solid #555;"
    "margin:0 0 1rem}"
    ".actions{display:flex;flex-wrap:wrap;gap:.75rem}"
    "button{font:inherit;font-weight:600;padding:.75rem 1.25rem;min-height:2.75rem;border:0;"
    "border-radius:.25rem;color:#fff;background:#1f4e99;cursor:pointer}"
    "button.approve{background:#1b5e20}button.deny{background:#b71c1c}"
    "button:focus-visible,input:focus-visible,textarea:focus-visible"
    "{outline:3px solid #000;outline-offset:2px}"
    ".muted{color:#444}" + CARD_CSS
)


def page_headers(css: str, *, script: bool = True) -> dict[str, str]:
    """The headers of a page whose one inline stylesheet is ``css`` (and whose one
    script is the local-time one; ``script=False``: a page with no script at all)."""
    css_hash = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode()
    scripts = f"script-src 'sha256-{SCRIPT_HASH}'; " if script else ""
    return {
        "Content-Type": "text/html; charset=utf-8",
        # Only our inline stylesheet (by hash), forms only to ourselves, no framing.
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'sha256-{css_hash}'; "
            f"{scripts}form-action 'self'; "
            "frame-ancestors 'none'; base-uri 'none'"
        ),
        # The token is in the URL: no other origin may see it in a Referer. Not
        # no-referrer, under which browsers send ``Origin: null`` on our own POST.
        "Referrer-Policy": "same-origin",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-store",
    }


PAGE_HEADERS: Final[dict[str, str]] = page_headers(_CSS)

_OUTCOME_TITLES: Final = {
    "approved": "Approved",
    "denied": "Denied",
    "answered": "Answered",
    "expired": "Expired",
    "pending": "Still waiting for a decision",
}


# How a decided page words each final status (``decided_by``).
_DECIDED: Final = {
    "approved": "Approved",
    "denied": "Denied",
    "answered": "Answered",
    "expired": "Expired",
}


def _e(value: object) -> str:
    """Text for the page: hidden characters shown escaped (approver.display), HTML-escaped."""
    return escape(visible(str(value)), quote=True)


def _time(epoch: float) -> str:
    return time_html(epoch)


def _page(title: str, body: str, *, heading: bool = True) -> str:
    """A whole page; ``heading=False`` when ``body`` brings its own ``<h1>`` (the card's)."""
    h1 = f"<h1>{_e(title)}</h1>\n" if heading else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="robots" content="noindex, nofollow">\n'
        '<meta name="referrer" content="same-origin">\n'
        f"<title>{_e(title)} · signoff</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{h1}{body}</main>\n<script>{LOCAL_TIME_JS}</script>\n"
        "</body>\n</html>\n"
    )


def _details(rows: list[tuple[str, str]]) -> str:
    """A definition list of already-escaped (term, HTML) rows."""
    items = "".join(f"<dt>{term}</dt><dd>{value}</dd>\n" for term, value in rows)
    return f"<dl>\n{items}</dl>\n"


def _subject(item: PendingItem) -> str:
    """One escaped line saying what the item asks."""
    if item.kind == "question":
        return f"The agent <strong>{_e(item.agent)}</strong> asked: {_e(item.question or '')}"
    return (
        f"The agent <strong>{_e(item.agent)}</strong> asked: "
        f"<strong>{_e(card_of(item).summary)}</strong> "
        f"(the tool <code>{_e(item.tool or '')}</code>)."
    )


def _scope_rows(item: PendingItem) -> list[tuple[str, str]]:
    scope = item.scope
    tenant = scope.tenant if scope else item.tenant
    environment = scope.environment if scope else item.environment
    agent = scope.agent if scope else item.agent
    return [
        ("Tenant", _e(tenant)),
        ("Environment", _e(environment)),
        ("Agent", _e(agent)),
        ("Requested by", f"agent {_e(item.agent)}, session <code>{_e(item.session_id)}</code>"),
        ("Requested at", _time(item.requested_at)),
    ]


def _arguments(item: PendingItem) -> str:
    if item.args is None:
        return '<p class="muted">No arguments.</p>\n'
    text = json.dumps(item.args, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return f"<pre>{_e(text)}</pre>\n"


def _form(action_path: str, token: str, fields: str) -> str:
    return (
        f'<form method="post" action="{_e(action_path)}">\n'
        f'<input type="hidden" name="token" value="{_e(token)}">\n{fields}</form>\n'
    )


# What a read-only (``view``) link's page says in place of the form.
_READ_ONLY = (
    '<p class="muted">This link only shows the request; it cannot decide it. '
    "Decide with the buttons of the message it came in (if you are one of that "
    "channel's approvers), through the signoff API, or through another channel "
    "of the agent.</p>\n"
)


def _approval(item: PendingItem, expires_text: str, now: float | None) -> str:
    """The approval's decision card (``signoff.web.card_html``)."""
    return approval_card(
        card_of(item), now=now, expires_text=expires_text, session_id=item.session_id
    )


def _answer_fields(item: PendingItem) -> str:
    fields = ""
    if item.options:
        radios = "".join(
            f'<label for="choice-{n}"><input type="radio" id="choice-{n}" name="choice" '
            # The value is the option as the model gave it: what a choice answers.
            f'value="{escape(option, quote=True)}"> {_e(option)}</label>\n'
            for n, option in enumerate(item.options)
        )
        fields += f"<fieldset>\n<legend>Choose an answer</legend>\n{radios}</fieldset>\n"
        label = "Or write your own answer (it takes precedence over a choice)"
    else:
        label = "Your answer"
    return fields + (
        f'<label for="answer">{label}</label>\n'
        '<textarea id="answer" name="answer" rows="3"></textarea>\n'
        '<div class="actions">\n'
        '<button type="submit" name="decision" value="answer">Send answer</button>\n'
        "</div>\n"
    )


def _question(item: PendingItem, expires_text: str, action: str, *, list_options: bool) -> str:
    """The question's page: what is asked, then ``action`` (the form, or the read-only note).

    ``list_options`` shows the suggested answers as text, where no form offers them.
    """
    rows = [*_scope_rows(item), ("Expires", _e(expires_text))]
    if item.options and list_options:
        rows.append(("Suggested answers", "<br>".join(_e(o) for o in item.options)))
    return (
        f"<p>The agent <strong>{_e(item.agent)}</strong> asks a question "
        "and waits for your answer.</p>\n"
        f"<h2>Question</h2>\n<p>{_e(item.question or '')}</p>\n"
        f"{_details(rows)}{action}"
    )


def confirmation_page(
    item: PendingItem,
    token: str,
    *,
    action_path: str,
    expires_text: str,
    editable: bool = False,
    now: float | None = None,
) -> str:
    """What is asked, and a form that POSTs the decision (approve / deny, or an answer).

    ``editable``: the tool takes changes, so the form offers its arguments to change.
    ``now`` (epoch seconds) words the expiry relative to it; else ``expires_text`` does.
    An approval's form wraps its whole card, so its sticky button bar (``card_html``)
    stays on screen on a phone.
    """
    if item.kind == "question":
        form = _form(action_path, token, _answer_fields(item))
        return _page("Answer a question", _question(item, expires_text, form, list_options=False))
    card = _approval(item, expires_text, now)
    form = _form(action_path, token, card + decision_fields(item, editable=editable))
    return _page(f"Approve? {card_of(item).summary}", form, heading=False)


def view_page(item: PendingItem, *, expires_text: str, now: float | None = None) -> str:
    """What is asked, read-only: no form, for a ``view`` link (one that decides nothing)."""
    if item.kind == "question":
        return _page(
            "A question waits", _question(item, expires_text, _READ_ONLY, list_options=True)
        )
    card = _approval(item, expires_text, now)
    return _page(f"An approval waits: {card_of(item).summary}", card + _READ_ONLY, heading=False)


def decided_by(item: PendingItem) -> str | None:
    """Who decided ``item`` and how, as plain text (None while undecided).

    ``Approved by alice@example.com through the ops-mail channel``; a link that
    names nobody (a webhook's) says so, and an expiry names no person
    (``signoff.approver.card.decided_line``; the page adds when, as a ``<time>``).
    """
    if item.status not in _DECIDED or not item.resolved_by:
        return None
    return decided_line(item.status, item.resolved_by, item.resolved_via, None)


def _resolution(item: PendingItem) -> list[tuple[str, str]]:
    rows = [("Status", _e(item.status))]
    if item.status == "answered":
        rows.append(("Answer", _e(item.answer or "")))
    who = decided_by(item)
    if who is not None and item.resolved_at is not None:
        rows.append(("Decided", f"{_e(who)}, {_time(item.resolved_at)}"))
    elif item.status == "expired":
        rows.append(("Expired at", _time(item.expires_at)))
    if item.tally is not None and item.votes:
        rows.append(("Approvals", _e(item.tally)))
    edited = item.edited_args
    if edited is not None and item.status == "approved":
        rows.append(("Changes", _e(describe_changes(item.args or {}, edited))))
    if item.note:
        # a deny's note is its reason, the words the agent reads
        rows.append(("Reason" if item.status == "denied" else "Note", _e(item.note)))
    return rows


def outcome_page(item: PendingItem) -> str:
    """The result of the decision just made: approved, denied or answered, by whom, when."""
    title = _OUTCOME_TITLES.get(item.status, item.status)
    body = f"<p>{_subject(item)}</p>\n{_details(_resolution(item))}"
    body += '<p class="muted">The agent continues from here. You can close this page.</p>\n'
    return _page(title, body)


def vote_page(item: PendingItem) -> str:
    """A vote was recorded on an approval that needs more: the tally, and that it waits."""
    body = (
        f"<p>{_subject(item)}</p>\n"
        f"<p>Your vote is recorded: {_e(item.tally or '')}.</p>\n"
        '<p class="muted">The agent continues once the request has all its approvals. '
        "You can close this page.</p>\n"
    )
    return _page("Vote recorded", body)


def already_voted_page(item: PendingItem, person: str) -> str:
    """This person voted on the item before: what they voted, and the tally now."""
    voted = next((vote for vote in item.votes if vote.person == person), None)
    verb = "approved" if voted is None or voted.decision == "approve" else "denied"
    body = (
        f"<p>{_subject(item)}</p>\n"
        f"<p>You already {verb} this; a person counts once. "
        f"{_e(item.tally or '')}.</p>\n"
    )
    return _page(f"You already {verb} this", body)


def already_resolved_page(item: PendingItem) -> str:
    """The request was decided before this click: its current state and who decided it."""
    if item.status == "expired":
        # Expiry is the sweeper's resolution; the expired page says it plainly.
        return expired_page(item)
    body = (
        f"<p>{_subject(item)}</p>\n"
        "<p>This request was already decided; nothing you do here changes it.</p>\n"
        f"{_details(_resolution(item))}"
    )
    return _page("Already decided", body)


def expired_page(item: PendingItem | None) -> str:
    """The link, or the request behind it, ran out of time; what it was about when known."""
    body = ""
    if item is not None:
        body += f"<p>{_subject(item)}</p>\n"
        body += _details([("Expired at", _time(item.expires_at))])
    body += (
        "<p>Nothing was changed. Ask whoever runs the agent to start it again "
        "if the request still matters.</p>\n"
    )
    return _page("This link has expired", body)


def error_page(status: int, title: str, detail: str) -> str:
    """A page for a failed request: what went wrong, in words, and its HTTP status."""
    body = f'<p>{_e(detail)}</p>\n<p class="muted">Error {_e(status)}.</p>\n'
    return _page(title, body)
