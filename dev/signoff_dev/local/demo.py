"""``signoff demo``: one durable approval end to end, over real HTTP, against a local stack.

The demo is a client like any other: it sends the customer-service refund
message as the ``default`` tenant (anonymous, production rules), waits for the
notification at the local webhook sink, follows its link (a ``GET`` that shows
the tool and changes nothing), submits the page's form — Approve, Deny, or for
``question`` an answer and then the follow-up approval — and polls the
session's status URL until the turn is ``done``. Every step is narrated on the
console; a step that does not go as expected raises ``SignoffError`` saying
which, so the command exits 1.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any, Final, Literal

import httpx

from signoff.errors import SignoffError

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["AGENT", "Demo", "Mode", "PageForm"]

AGENT: Final = "customer-service"
Mode = Literal["approve", "deny", "question"]
MESSAGES: Final[dict[str, str]] = {
    "approve": "order A-1001 arrived broken, can you refund it?",
    "deny": "order A-1001 arrived broken, can you refund it?",
    "question": "I want my money back",
}
ANSWER: Final = "A-1002"  # the order the --question demo names on the page
_WAIT: Final = 30.0  # seconds any one step may take on loopback before the demo gives up
_POLL: Final = 0.1


@dataclass
class PageForm:
    """What a page shows and the first form on it, read the way a browser would."""

    heading: str = ""
    text: str = ""
    action: str = ""
    fields: dict[str, str] = field(default_factory=dict)  # hidden inputs and text areas
    choices: dict[str, list[str]] = field(default_factory=dict)  # radio name → values
    buttons: dict[str, list[str]] = field(default_factory=dict)  # submit name → values

    @classmethod
    def parse(cls, html: str) -> PageForm:
        parser = _FormParser()
        parser.feed(html)
        parser.close()
        parser.page.text = " ".join(" ".join(parser.texts).split())
        return parser.page


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.page = PageForm()
        self._in_form = False
        self._in_heading = False
        self._textarea: str | None = None
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        name = attributes.get("name", "")
        if tag == "h1":
            self._in_heading = True
        elif tag == "form" and not self.page.action:
            self._in_form, self.page.action = True, attributes.get("action", "")
        elif self._in_form and tag == "input" and attributes.get("type") == "radio":
            self.page.choices.setdefault(name, []).append(attributes.get("value", ""))
        elif self._in_form and tag == "input" and name:
            self.page.fields[name] = attributes.get("value", "")
        elif self._in_form and tag == "textarea" and name:
            self._textarea = name
            self.page.fields[name] = ""
        elif self._in_form and tag == "button" and name:
            self.page.buttons.setdefault(name, []).append(attributes.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1":
            self._in_heading = False
        elif tag == "form":
            self._in_form = False
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._in_heading:
            self.page.heading += data.strip()
        if self._textarea is not None:
            self.page.fields[self._textarea] += data
        self.texts.append(data)


class Demo:
    """The demo's client, against the stack at ``base_url``; ``say`` narrates."""

    def __init__(self, base_url: str, say: Callable[[str], None]) -> None:
        self.base_url = base_url
        self._say = say
        self._http = httpx.Client(base_url=base_url, timeout=_WAIT, follow_redirects=False)
        self._steps = 0

    def _step(self, text: str) -> None:
        """Narrate the next numbered step."""
        self._steps += 1
        self._say(f"{self._steps}. {text}")

    def close(self) -> None:
        self._http.close()

    def run(self, mode: Mode) -> dict[str, Any]:
        """The whole demo; returns the finished session's status body.

        Raises:
            SignoffError: a step did not go as expected (the message says which).
        """
        try:
            return self._run(mode)
        except httpx.HTTPError as exc:
            raise SignoffError(f"the demo could not talk to {self.base_url}: {exc}") from exc

    def _run(self, mode: Mode) -> dict[str, Any]:
        message = MESSAGES[mode]
        self._step(f'The customer writes to {AGENT} (tenant "default", no API key): "{message}"')
        sent = self._http.post(f"/agents/{AGENT}/messages", json={"message": message})
        paused = self._expect(sent, 202, "the message")
        self._say(f"   POST /agents/{AGENT}/messages → 202 {_pending(paused)}")
        status_url = str(paused["statusUrl"])
        if mode == "question":
            self._decide(paused, {"choice": ANSWER}, f"Answer {ANSWER}")
            paused = self._wait_paused(status_url, other_than=str(paused["id"]))
            self._step(f"The turn goes on and pauses again: {_pending(paused)}")
            self._decide(paused, {"decision": "approve"}, "Approve")
        else:
            label = "Approve" if mode == "approve" else "Deny"
            self._decide(paused, {"decision": mode}, label)
        finished = self._wait_done(status_url)
        self._say(f"   text: {finished.get('text', '')}")
        self._say("   events:")
        for line in _event_lines(finished.get("events", [])):
            self._say(f"     {line}")
        return finished

    def _decide(self, pending: dict[str, Any], choice: dict[str, str], label: str) -> None:
        """Wait for the notification of ``pending``, open its link, submit the form."""
        pending_id = str(pending["id"])
        self._step("The notification reaches the local webhook sink (signature verified):")
        notification = self._wait_notification(pending_id)
        self._say(f"   {notification.get('kind')}: {notification.get('title', '')}")
        link = str(notification.get("linkUrl", ""))
        if not link.startswith(self.base_url):
            raise SignoffError(f"the notification has no link to this stack: {notification}")
        self._say(f"   link: {link}")
        path = link.removeprefix(self.base_url)
        page = PageForm.parse(self._expect_html(self._http.get(path), 200, "the link page"))
        asked = pending.get("tool") or pending.get("question") or ""
        if asked and str(asked) not in page.text:
            raise SignoffError(f"the link page does not show {asked!r}: {page.text[:300]}")
        still = self._expect(self._http.get(str(pending["statusUrl"])), 200, "the session status")
        if still.get("status") != "paused":
            raise SignoffError(f"opening the link changed the session: {still.get('status')}")
        self._step(
            f'Following the link: GET → 200 "{page.heading}", showing {asked}; '
            "the session is still paused (a GET changes nothing)"
        )
        form = {**page.fields, **choice}
        if "choice" in choice and "decision" in page.buttons:
            form["decision"] = page.buttons["decision"][0]  # the page's one submit button
        # A browser sends the page's own origin with a form; the page refuses any other.
        answer = self._http.post(page.action or path, data=form, headers={"origin": self.base_url})
        outcome = PageForm.parse(self._expect_html(answer, 200, f"{label} on the link page"))
        self._step(f'{label} on the page: POST {path[:16]}… → 200 "{outcome.heading}"')

    def _wait_notification(self, pending_id: str) -> dict[str, Any]:
        from signoff_dev.local.sink import notification_of

        deadline = time.monotonic() + _WAIT
        while time.monotonic() < deadline:
            listed = self._expect(self._http.get("/_local/notifications"), 200, "the sink")
            for received in listed.get("notifications", []):
                notification: dict[str, Any] = received.get("notification", {})
                sent = notification_of(notification)
                if sent is not None and sent.pending_id == pending_id:
                    return notification
            time.sleep(_POLL)
        raise SignoffError(f"no notification for {pending_id} reached the sink in {_WAIT:.0f} s")

    def _wait_paused(self, status_url: str, other_than: str) -> dict[str, Any]:
        status = self._wait_status(status_url, lambda s: _pending_id(s) not in (None, other_than))
        pending: dict[str, Any] = status["pending"]
        return pending

    def _wait_done(self, status_url: str) -> dict[str, Any]:
        status = self._wait_status(status_url, lambda s: s.get("status") == "done")
        self._step(f"The turn finishes: GET {status_url} → done")
        return status

    def _wait_status(
        self, status_url: str, ready: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any]:
        deadline = time.monotonic() + _WAIT
        status: dict[str, Any] = {}
        while time.monotonic() < deadline:
            status = self._expect(self._http.get(status_url), 200, "the session status")
            if ready(status):
                return status
            time.sleep(_POLL)
        raise SignoffError(f"the session did not get there in {_WAIT:.0f} s: {status}")

    @staticmethod
    def _expect(response: httpx.Response, status: int, what: str) -> dict[str, Any]:
        if response.status_code != status:
            raise SignoffError(
                f"{what}: expected {status}, got {response.status_code}: {response.text[:300]}"
            )
        body: dict[str, Any] = response.json()
        return body

    @staticmethod
    def _expect_html(response: httpx.Response, status: int, what: str) -> str:
        if response.status_code != status:
            page = PageForm.parse(response.text)
            raise SignoffError(
                f"{what}: expected {status}, got {response.status_code}: {page.heading} "
                f"{page.text[:200]}"
            )
        return response.text


def _pending_id(status: dict[str, Any]) -> str | None:
    pending = status.get("pending")
    return str(pending["id"]) if isinstance(pending, dict) and "id" in pending else None


def _pending(body: dict[str, Any]) -> str:
    """A 202 body in a few words: what the turn waits for."""
    if body.get("type") == "question":
        options = body.get("options") or []
        return f"question: {body.get('question')} [{' / '.join(options)}]"
    args = json.dumps(body.get("args") or {}, ensure_ascii=False)
    return f"{body.get('type')}: {body.get('tool')} {args} ({body.get('reason', '')})"


def _event_lines(events: list[dict[str, Any]]) -> list[str]:
    """One readable line per event (the CLI's rendering; the type when it has none)."""
    from signoff.events import parse
    from signoff_dev.render import render

    lines = []
    for data in events:
        try:
            line = render(parse(data))
        except ValueError:  # a newer event type than this client knows
            line = None
        lines.append(line or str(data.get("type", "?")))
    return lines
