"""The decision card as HTML: the link page's body for an approval (``signoff.approver.card``).

Mobile first. At 390 px the summary is the page's heading and the Approve / Deny
bar stays on screen: it is ``position: sticky`` at the bottom of the form, and the
form wraps the whole card, so the bar is visible without scrolling however long
the card is (on a desktop too). From 48 rem it reads as a transactional page: one
centred card on a grey page.

Every value is model- or user-influenced: shown through ``signoff.approver.display.visible``,
then HTML-escaped (``e``). The one script (``LOCAL_TIME_JS``, allowed by its hash)
only adds the reader's local time beside each UTC ``<time>``, through
``textContent``; the page works the same without it.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Final

from signoff.approver.card import utc
from signoff.approver.display import visible

if TYPE_CHECKING:
    from signoff.approver.card import Card

__all__ = ["CARD_CSS", "LOCAL_TIME_JS", "SCRIPT_HASH", "approval_card", "e", "time_html"]

# Contrast (light / dark): text 16:1 / 14:1, muted 9.7:1 / 8:1, buttons' white ≥ 6.5:1.
CARD_CSS: Final = (
    ".eyebrow{margin:0 0 .25rem;font-size:.85rem;font-weight:600;color:#444;"
    "text-transform:uppercase;letter-spacing:.04em}"
    ".summary{font-size:1.35rem;line-height:1.3;margin:0 0 .5rem;overflow-wrap:anywhere}"
    ".meta{margin:0 0 1rem;color:#444;font-size:.95rem}"
    ".quote{margin:0 0 1rem;padding:.5rem .75rem;border-left:4px solid #1f4e99;"
    "background:#f3f5f9;white-space:pre-wrap;overflow-wrap:anywhere}"
    ".label{margin:0 0 .25rem;font-size:.85rem;font-weight:600;color:#444}"
    "details{margin:0 0 1rem}summary{cursor:pointer;font-weight:600;padding:.25rem 0}"
    ".local{color:#444}"
    "form .actions{position:sticky;bottom:0;background:#fff;padding:.75rem 0;margin:0;"
    "border-top:1px solid #d0d7de}"
    "form .actions button{flex:1 1 0}"
    "@media (min-width:48rem){body{background:#f4f5f7}"
    "main{margin:2rem auto;padding:2rem;background:#fff;border:1px solid #d0d7de;"
    "border-radius:.5rem}.summary{font-size:1.6rem}"
    "form .actions button{flex:0 0 auto;min-width:9rem}}"
    "@media (prefers-color-scheme:dark){body,main,form .actions{background:#111418;color:#e6edf3}"
    "main{border-color:#3d444d}.muted,.meta,.label,.eyebrow,.local{color:#b1bac4}"
    ".quote,pre{background:#1c2128;color:#e6edf3}pre{border-color:#8b949e}"
    "textarea,input{background:#0d1117;color:#e6edf3;border-color:#8b949e}"
    "button:focus-visible,input:focus-visible,textarea:focus-visible{outline-color:#fff}}"
)

# Fills each ``<span class="local">`` after a ``<time>`` with the reader's own time.
LOCAL_TIME_JS: Final = (
    "for(const t of document.querySelectorAll('time[datetime]')){"
    "const d=new Date(t.getAttribute('datetime'));const s=t.nextElementSibling;"
    "if(isNaN(d)||!s||!s.classList.contains('local'))continue;"
    "s.textContent=' · '+d.toLocaleString([],{dateStyle:'medium',timeStyle:'short'})"
    "+' your time'}"
)
SCRIPT_HASH: Final = base64.b64encode(hashlib.sha256(LOCAL_TIME_JS.encode()).digest()).decode()


def e(value: object) -> str:
    """Text for the page: hidden characters shown escaped (approver.display), HTML-escaped."""
    return escape(visible(str(value)), quote=True)


def time_html(epoch: float) -> str:
    """``<time>`` in UTC, and the span the script fills with the reader's local time."""
    machine = datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")
    machine = machine.replace("+00:00", "Z")
    return f'<time datetime="{machine}">{utc(epoch)}</time><span class="local"></span>'


def _quote(label: str, text: str | None) -> str:
    if not text:
        return ""
    return f'<p class="label">{e(label)}</p>\n<p class="quote">{e(text)}</p>\n'


def approval_card(card: Card, *, now: float | None, expires_text: str, session_id: str) -> str:
    """The card's HTML: eyebrow, summary heading, for whom and when, the conversation,
    why, then the full arguments one click away. ``now`` (the server's clock) makes
    the expiry relative; without it ``expires_text`` says it."""
    left = expires_text if now is None else card.expires(now).split(" (", 1)[0]
    rows = [
        ("Why it asks", e(card.reason or "a rule asks a person for this call")),
        ("Expires", f"{e(left)} — {time_html(card.expires_at)}"),
        ("Requested", f"{time_html(card.requested_at)}, session <code>{e(session_id)}</code>"),
    ]
    if card.approvals is not None:
        rows.insert(1, ("Approvals", e(card.approvals)))
    if card.escalation is not None:
        # without the server's clock, when it was taken, absolutely
        escalated = card.escalation.where(card.requested_at if now is None else now)
        rows.insert(1, ("Escalated", e(escalated)))
    facts = "".join(f"<dt>{label}</dt><dd>{value}</dd>\n" for label, value in rows)
    return (
        f'<p class="eyebrow">Approval needed · {e(card.agent)}</p>\n'
        f'<h1 class="summary">{e(card.summary)}</h1>\n'
        f'<p class="meta">{e(card.for_whom)} · expires {e(left)}</p>\n'
        f"{_quote('The request', card.request)}"
        f"{_quote('The agent said', card.said)}"
        f"<dl>\n{facts}</dl>\n"
        f"<details>\n<summary>Full arguments of <code>{e(card.tool or '')}</code></summary>\n"
        f"<pre>{e(card.arguments)}</pre>\n</details>\n"
    )
