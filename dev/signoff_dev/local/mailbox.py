"""The local stack's captured emails: what the email channels sent through the emulator's SES.

Locally every email channel sends through SES v2 at the AWS emulator, which
accepts the message and delivers it nowhere. moto's server runs in this process
(``signoff_dev.local.emulator``), so its SES backend's ``sent_messages`` can be
read here: ``Mailbox`` looks for new ones a few times a second, prints each
with its links (like the webhook sink's notifications) and keeps it.
``GET /_local/emails`` lists what was captured as JSON, oldest first: ``to``,
``from``, ``subject``, ``text``, ``html``, the ``links`` found in the mail
and ``receivedAt`` (when the mailbox saw it: moto records no time).

moto keeps one body per simple message: the HTML part when there is one
(signoff's mails always have one), else the text part. ``html`` is that HTML
and ``text`` the text it shows, tags dropped; a text-only mail has ``text``
and no ``html``. Raw and templated messages are not captured.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any, Final

from signoff_dev.local.gateway import HttpRequest, HttpResponse

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["EMAILS_PATH", "CapturedEmail", "Mailbox", "emulator_sent_messages"]

EMAILS_PATH: Final = "/_local/emails"
_EVERY: Final = 0.2  # seconds between looks at the emulator's sent messages
_URL: Final = re.compile(r"https?://[^\s<>\"']+")
_BLOCKS: Final = frozenset({"br", "p", "div", "h1", "h2", "h3", "dt", "dd", "pre", "li", "tr"})
_UNSEEN: Final = frozenset({"head", "style", "script", "title"})


@dataclass(frozen=True, kw_only=True)
class CapturedEmail:
    """One mail the emulator's SES accepted."""

    message_id: str
    to: list[str]
    sender: str
    subject: str
    text: str
    html: str | None
    links: list[str]
    received_at: str

    def wire(self) -> dict[str, Any]:
        return {
            "messageId": self.message_id,
            "to": self.to,
            "from": self.sender,
            "subject": self.subject,
            "text": self.text,
            "html": self.html,
            "links": self.links,
            "receivedAt": self.received_at,
        }


def emulator_sent_messages(account: str, region: str) -> Callable[[], Sequence[object]]:
    """What moto's SES (v1 and v2 share it) has accepted in ``account`` and ``region``."""
    from moto.ses.models import ses_backends

    def sent() -> Sequence[object]:
        return list(ses_backends[account][region].sent_messages)

    return sent


class Mailbox:
    """Captures, prints and keeps the mails the emulator's SES accepted."""

    def __init__(
        self,
        *,
        sent: Callable[[], Sequence[object]],
        printer: Callable[[str], None],
        stop: threading.Event,
    ) -> None:
        """``sent`` reads the emulator's sent messages; ``stop`` ends the watching thread."""
        self._sent = sent
        self._print = printer
        self._stop = stop
        self._seen: set[str] = set()
        self._emails: list[CapturedEmail] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="mailbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float) -> None:
        """Wait for the watching thread to end (after ``stop`` is set), if it started."""
        if self._thread.is_alive():
            self._thread.join(timeout)

    def emails(self) -> list[CapturedEmail]:
        """Every mail captured so far, oldest first (newly sent ones are taken first)."""
        self.collect()
        with self._lock:
            return list(self._emails)

    def routes(self) -> dict[tuple[str, str], Callable[[HttpRequest], HttpResponse]]:
        """The mailbox's local-only route, for the gateway."""
        return {("GET", EMAILS_PATH): self.listing}

    def listing(self, _: HttpRequest) -> HttpResponse:
        return HttpResponse.json(200, {"emails": [e.wire() for e in self.emails()]})

    def collect(self) -> int:
        """Take the mails sent since the last look, printing each; how many there were."""
        new: list[CapturedEmail] = []
        with self._lock:
            for message in self._sent():
                email = _captured(message)
                if email is None or email.message_id in self._seen:
                    continue
                self._seen.add(email.message_id)
                self._emails.append(email)
                new.append(email)
        for email in new:
            self._print("\n".join(describe(email)))
        return len(new)

    def _run(self) -> None:
        while not self._stop.wait(_EVERY):
            self.collect()


def describe(email: CapturedEmail) -> list[str]:
    """A captured mail as console lines: who, what, then each link."""
    lines = [f"email to {', '.join(email.to)} · {email.subject}", f"  from     {email.sender}"]
    lines += [f"  open     {link}  (in a browser)" for link in email.links]
    return lines


def _captured(message: object) -> CapturedEmail | None:
    """A moto ``Message`` as a ``CapturedEmail``; None for raw and templated ones."""
    body, subject = getattr(message, "body", None), getattr(message, "subject", None)
    if not isinstance(body, str) or not isinstance(subject, str):
        return None
    destinations = getattr(message, "destinations", None) or {}
    is_html = body.lstrip().startswith("<")
    text = _HtmlText.of(body) if is_html else body
    links = _HtmlText.links_of(body) if is_html else []
    links += [url for url in _URL.findall(text) if url not in links]
    return CapturedEmail(
        message_id=str(getattr(message, "id", "")),
        to=list(destinations.get("ToAddresses", [])),
        sender=str(getattr(message, "source", "")),
        subject=subject,
        text=text,
        html=body if is_html else None,
        links=links,
        received_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
    )


class _HtmlText(HTMLParser):
    """The text an HTML body shows (a line per block) and the targets of its links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.links: list[str] = []
        # inside <head> (the title, the dark-mode stylesheet): nothing a reader sees
        self._hidden = 0

    @classmethod
    def of(cls, html: str) -> str:
        parser = cls()
        parser.feed(html)
        parser.close()
        lines = (line.strip() for line in "".join(parser.parts).splitlines())
        return "\n".join(line for line in lines if line) + "\n"

    @classmethod
    def links_of(cls, html: str) -> list[str]:
        parser = cls()
        parser.feed(html)
        parser.close()
        return list(dict.fromkeys(parser.links))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _UNSEEN:
            self._hidden += 1
        if tag in _BLOCKS:
            self.parts.append("\n")
        href = dict(attrs).get("href")
        if tag == "a" and href and _URL.fullmatch(href):
            self.links.append(href)

    def handle_endtag(self, tag: str) -> None:
        if tag in _UNSEEN:
            self._hidden = max(0, self._hidden - 1)
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)
