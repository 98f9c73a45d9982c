"""The approvals inbox as a page: pending items that open their cards, and the history.

One column on a phone, the history a table on a desktop (a CSS media query; no
script but the card's constant local-time one). Every value is escaped as on the
link pages (``card_html.e``): tool names, summaries and reasons come from models.
Serve it with ``INBOX_HEADERS``: its policy allows this module's stylesheet by hash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import urlencode

from signoff.approver.card import relative
from signoff.web.card_html import LOCAL_TIME_JS, e
from signoff.web.pages import page_headers

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.approvals.inbox import HistoryEntry, InboxItem

__all__ = ["INBOX_HEADERS", "inbox_html"]

# Contrast as the link pages: body 16:1, muted 9.7:1, link blue 8.6:1.
_CSS: Final = (
    "*{box-sizing:border-box}"
    "body{margin:0;font:1rem/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
    "color:#1a1a1a;background:#fff}"
    "main{max-width:72rem;margin:0 auto;padding:1rem}"
    "h1{font-size:1.4rem;margin:.5rem 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}"
    "a{color:#0b4a9c}.muted{color:#444}"
    "ul.items{list-style:none;margin:0;padding:0;display:grid;gap:.75rem;"
    "grid-template-columns:repeat(auto-fill,minmax(20rem,1fr))}"
    "li.item{border:1px solid #767676;border-radius:.25rem;padding:.75rem}"
    "li.item a.open{display:block;font-weight:600;font-size:1.05rem;overflow-wrap:anywhere}"
    ".facts{margin:.25rem 0 0;font-size:.9rem;overflow-wrap:anywhere}"
    "form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end;margin:0 0 .75rem}"
    "form.filters label{display:flex;flex-direction:column;font-size:.85rem}"
    "form.filters input{font:inherit;padding:.35rem;border:1px solid #555;width:9rem}"
    "button{font:inherit;font-weight:600;padding:.5rem 1rem;min-height:2.75rem;border:0;"
    "border-radius:.25rem;color:#fff;background:#1f4e99}"
    "table{border-collapse:collapse;width:100%;font-size:.9rem}"
    "th,td{text-align:left;vertical-align:top;padding:.4rem;border-bottom:1px solid #ccc;"
    "overflow-wrap:anywhere}"
    "tr.refusal td{background:#fdecea}"
    ".tag{display:inline-block;padding:0 .35rem;border-radius:.25rem;background:#b71c1c;"
    "color:#fff;font-size:.8rem;font-weight:600}"
    "@media (max-width:40rem){"
    "ul.items{grid-template-columns:1fr}"
    "table,tbody,tr,td{display:block}thead{display:none}"
    "tr{border:1px solid #767676;border-radius:.25rem;margin:0 0 .75rem;padding:.25rem .5rem}"
    "td{border:0;padding:.15rem 0}"
    "td::before{content:attr(data-label) ': ';font-weight:600}"
    "form.filters input{width:100%}form.filters label{flex:1 1 45%}}"
    "a:focus-visible,button:focus-visible,input:focus-visible"
    "{outline:3px solid #000;outline-offset:2px}"
)
# The link pages' headers, for this page's stylesheet: the inbox token is in its URL too.
INBOX_HEADERS: Final[dict[str, str]] = page_headers(_CSS)

_FILTERS: Final = ("agent", "tool", "decision", "actor", "channel", "since", "until")


def _href(path: str, query: Mapping[str, str]) -> str:
    given = {name: value for name, value in query.items() if value}
    return path + ("?" + urlencode(given) if given else "")


def _item(item: InboxItem, card_href: str) -> str:
    votes = ", ".join(vote.person for vote in item.votes)
    facts = [
        f"{e(item.agent)} · <code>{e(item.tool or item.kind)}</code>",
        f"waiting {e(relative(-item.age_seconds).removesuffix(' ago'))} · "
        f'requested <time datetime="{e(item.requested_at)}">{e(item.requested_at)}</time>',
    ]
    if item.rule:
        facts.append(f"rule <strong>{e(item.rule)}</strong>")
    if item.escalation_step:
        facts.append(f"escalation step {item.escalation_step}")
    if item.approvals_needed > 1 or item.votes:
        approvals = sum(1 for vote in item.votes if vote.decision == "approve")
        line = f"{approvals} of {item.approvals_needed} approvals"
        facts.append(e(f"{line} — {votes}" if votes else line))
    lines = "".join(f'<p class="facts">{fact}</p>' for fact in facts)
    return (
        f'<li class="item"><a class="open" href="{e(card_href)}">{e(item.summary)}</a>'
        f"{lines}</li>\n"
    )


def _history_row(entry: HistoryEntry) -> str:
    marked = ' <span class="tag">refused</span>' if entry.refused else ""
    cells = [
        ("When", f'<time datetime="{e(entry.at)}">{e(entry.at)}</time>'),
        ("Decision", e(entry.decision) + marked),
        ("Who", e(entry.actor)),
        ("Channel", e(entry.channel or "")),
        ("Agent", e(entry.agent or "")),
        ("Tool", f"<code>{e(entry.tool or '')}</code>"),
        ("Reason", e(entry.reason)),
    ]
    row = "".join(f'<td data-label="{label}">{value}</td>' for label, value in cells)
    css = ' class="refusal"' if entry.refused else ""
    return f"<tr{css}>{row}</tr>\n"


def inbox_html(
    *,
    tenant: str,
    viewer: str,
    items: list[InboxItem],
    entries: list[HistoryEntry],
    card_href: dict[str, str],
    filters: Mapping[str, str],
    access: Mapping[str, str],
    more_history: bool,
) -> str:
    """The inbox page. ``card_href`` maps an item's id to its card's URL; ``access`` is
    the query every link keeps (the inbox token, for a link's viewer); ``filters`` the
    history's filters as given."""
    listed = "".join(_item(item, card_href[item.pending_id]) for item in items)
    pending = (
        f'<ul class="items">\n{listed}</ul>\n'
        if items
        else '<p class="muted">Nothing waits for a decision.</p>\n'
    )
    fields = "".join(
        f'<label>{name}<input type="text" name="{name}" value="{e(filters.get(name, ""))}"'
        f' placeholder="{"7d" if name == "since" else ""}"></label>'
        for name in _FILTERS
    )
    hidden = "".join(
        f'<input type="hidden" name="{e(name)}" value="{e(value)}">'
        for name, value in access.items()
    )
    query = {**access, **filters}
    exports = (
        f'<p>Export: <a href="{e(_href("/inbox/audit.csv", query))}">CSV</a> · '
        f'<a href="{e(_href("/inbox/audit.json", query))}">JSON</a></p>\n'
    )
    rows = "".join(_history_row(entry) for entry in entries)
    head = "".join(
        f"<th>{label}</th>"
        for label in ("When", "Decision", "Who", "Channel", "Agent", "Tool", "Reason")
    )
    table = (
        f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n"
        if entries
        else '<p class="muted">No decisions in this range.</p>\n'
    )
    more = (
        '<p class="muted">Older entries: narrow the range, or export them.</p>\n'
        if more_history
        else ""
    )
    body = (
        f"<h1>Approvals inbox</h1>\n"
        f'<p class="muted">{e(tenant)} · {e(viewer)}</p>\n'
        f"<h2>Waiting ({len(items)})</h2>\n{pending}"
        f"<h2>History</h2>\n"
        f'<form class="filters" method="get" action="/inbox">{hidden}{fields}'
        f'<button type="submit">Filter</button></form>\n'
        f"{exports}{table}{more}"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="robots" content="noindex, nofollow">\n'
        '<meta name="referrer" content="same-origin">\n'
        f"<title>Approvals inbox · signoff</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}</main>\n<script>{LOCAL_TIME_JS}</script>\n"
        "</body>\n</html>\n"
    )
