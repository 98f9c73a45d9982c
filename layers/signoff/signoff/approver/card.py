"""The decision card: what an approver is shown about one pending item, the same everywhere.

The link page, the email, the Slack and Lark messages, the playground and the
CLI's prompt all show the same content, built here once:

- a one-line **summary** of the action: the tool's own template
  (``@tool(summary="Refund {amount} {currency} on order {orderId}")``), or a
  readable rendering of the arguments when the tool has none or it cannot be
  filled (a missing field, a bad format: never an error — the model chose the
  arguments, so a template must not fail on them);
- the **request** that started the turn and what the agent **said** just before
  the call (its ``assistant:text``) — left out when the agent's ``agent.yaml``
  says ``approvalCard: {conversation: false}``;
- the **rule** that asked and why (the gate's reason), who it is **for** (tenant,
  agent, environment), when it **expires** (relative and absolute, UTC), and the
  full **arguments** as JSON;
- for an approval that needs several people, the **approvals** so far
  ("1 of 2 approvals — alice");
- where it stands on its **escalation** ladder, once a step was taken
  ("Escalated to slack-leads 2 hours ago (step 1 of 3)" where the card is read
  later, a page or the status route; "Escalated to slack-leads at 2026-12-02
  15:48 UTC (step 1 of 3)" in a message drawn when it is sent or redrawn).

Every text here is model- or user-influenced and is returned raw: each surface
escapes for its own medium (HTML, mrkdwn, plain text) after ``signoff.approver.display``.
This module imports nothing of the channels or the web pages (they import it).
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "Card",
    "Escalation",
    "clip",
    "decided_line",
    "readable_args",
    "relative",
    "summarize",
    "utc",
]

# How much of a conversation text a card carries: enough to judge, not a transcript.
EXCERPT_MAX: Final = 600
SUMMARY_MAX: Final = 160
_VALUE_MAX: Final = 40
_FORMATTER: Final = string.Formatter()
# The escalation row's label; a plain-text card says the row as one sentence.
_ESCALATED: Final = "Escalated"

_VERBS: Final = {
    "approved": "Approved",
    "denied": "Denied",
    "answered": "Answered",
    "expired": "Expired",
}


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, an ellipsis marking a cut."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return clip(_one_line(value), _VALUE_MAX)
    return clip(json.dumps(value, ensure_ascii=False, default=str, sort_keys=True), _VALUE_MAX)


def readable_args(tool: str, args: Mapping[str, Any] | None) -> str:
    """``Refund order: amount 42, currency USD, orderId A-1001`` — one line, clipped."""
    action = tool.replace("_", " ").strip().capitalize() or "Run a tool"
    if not args:
        return clip(action, SUMMARY_MAX)
    parts = ", ".join(f"{name} {_scalar(value)}" for name, value in args.items())
    return clip(_one_line(f"{action}: {parts}"), SUMMARY_MAX)


def summarize(template: str | None, tool: str, args: Mapping[str, Any] | None) -> str:
    """The tool's ``summary`` template filled from ``args``; ``readable_args`` when it cannot be.

    Only plain field names are filled (``{amount}``, ``{amount:.2f}``): an attribute
    or index (``{a.b}``, ``{a[0]}``) or a conversion makes the template unusable, so a
    template never reaches into an argument's object.
    """
    if not template:
        return readable_args(tool, args)
    values = dict(args or {})
    try:
        for _, field, spec, conversion in _FORMATTER.parse(template):
            if field is None:
                continue
            if conversion or not field.isidentifier() or field not in values:
                return readable_args(tool, args)
            if spec and "{" in spec:
                return readable_args(tool, args)
        filled = template.format_map(values)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return readable_args(tool, args)
    return clip(_one_line(filled), SUMMARY_MAX) or readable_args(tool, args)


def utc(epoch: float) -> str:
    """``2026-12-01 18:05 UTC``."""
    return f"{datetime.fromtimestamp(epoch, UTC):%Y-%m-%d %H:%M} UTC"


def relative(seconds: float) -> str:
    """``in 3 hours`` / ``in 1 day`` / ``5 minutes ago``: rounded down to the largest unit."""
    ahead = seconds >= 0
    left = abs(int(seconds))
    count, unit = left, "second"
    for size, name in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if left >= size:
            count, unit = left // size, name
            break
    words = f"{count} {unit}{'' if count == 1 else 's'}"
    return f"in {words}" if ahead else f"{words} ago"


def _who(by: str) -> str:
    if by.startswith("apikey:"):
        key, _, tenant = by.removeprefix("apikey:").partition("@")
        return f"API key {key}" + (f" of tenant {tenant}" if tenant else "")
    return by


def _how(via: str) -> str:
    if via == "api":
        return "through the signoff API"
    if via == "link":
        return "through a link"
    if via == "cli":
        return "on the terminal"
    return f"through the {via} channel"


def decided_line(status: str, by: str | None, via: str | None, at: float | None) -> str | None:
    """``Approved by alice@example.com through the ops-mail channel at 2026-12-01 18:05 UTC``.

    Who decided, how and when, as one sentence; None while nobody has.
    """
    verb = _VERBS.get(status)
    if verb is None:
        return None
    when = f" at {utc(at)}" if at is not None else ""
    if status == "expired":
        return f"Expired: nobody decided in time{when}"
    if not by:
        return f"{verb}{when}"
    if by == "link":
        # A link that names nobody decides as whoever holds it: say so, name no one.
        return f"{verb} through a link that names no person{when}"
    return f"{verb} by {_who(by)} {_how(via or 'unknown')}{when}"


@dataclass(frozen=True, kw_only=True)
class Escalation:
    """Where an item stands on its escalation ladder: ``step`` of ``steps`` taken.

    ``at`` is when the last step was taken, ``to`` the channels that step asked and
    ``asked`` every channel the steps taken so far asked, in order, each once.
    """

    step: int
    steps: int
    at: float | None
    to: tuple[str, ...]
    asked: tuple[str, ...] = ()

    def where(self, now: float) -> str:
        """``to slack-leads 2 hours ago (step 1 of 3)``.

        A message rendered before ``at`` (a chat card drawn at its request time)
        says when, absolutely, instead of a time to come.
        """
        to = ", ".join(self.to) or "no new channel"
        when = ""
        if self.at is not None:
            ago = now - self.at
            when = f" {relative(-ago)}" if ago >= 1 else f" at {utc(self.at)}"
        return f"to {to}{when} (step {self.step} of {self.steps})"

    def line(self, now: float) -> str:
        """``Escalated to slack-leads 2 hours ago (step 1 of 3)``."""
        return f"Escalated {self.where(now)}"


@dataclass(frozen=True, kw_only=True)
class Card:
    """One pending item as an approver reads it; raw text, escaped by each surface."""

    kind: str  # approval | question
    agent: str
    tenant: str
    environment: str | None
    summary: str
    requested_at: float
    expires_at: float
    tool: str | None = None
    args: Mapping[str, Any] | None = None
    question: str | None = None
    options: tuple[str, ...] = ()
    reason: str | None = None
    request: str | None = None
    said: str | None = None
    escalation: Escalation | None = None
    # An approval that needs several people: the tally, "1 of 2 approvals — alice".
    approvals: str | None = None

    @property
    def arguments(self) -> str:
        """The full arguments, pretty JSON, keys sorted."""
        return json.dumps(
            dict(self.args or {}), indent=2, sort_keys=True, ensure_ascii=False, default=str
        )

    @property
    def for_whom(self) -> str:
        """``agent support · tenant acme · production``."""
        parts = [f"agent {self.agent}", f"tenant {self.tenant}"]
        if self.environment:
            parts.append(self.environment)
        return " · ".join(parts)

    def expires(self, now: float) -> str:
        """``in 23 hours (2026-12-02 18:00 UTC)``, or ``expired …`` when past."""
        left = self.expires_at - now
        moment = utc(self.expires_at)
        return f"{relative(left)} ({moment})" if left > 0 else f"expired {moment}"

    def facts(self, now: float) -> list[tuple[str, str]]:
        """The card's rows after its summary, in reading order: (label, raw text)."""
        rows: list[tuple[str, str]] = []
        if self.request:
            rows.append(("Request", self.request))
        if self.said:
            rows.append(("The agent said", self.said))
        if self.kind == "approval":
            rows.append(("Why it asks", self.reason or "a rule asks a person for this call"))
        rows.append(("For", self.for_whom))
        if self.approvals is not None:
            rows.append(("Approvals", self.approvals))
        rows.append(("Expires", self.expires(now)))
        if self.escalation is not None:
            rows.append((_ESCALATED, self.escalation.where(now)))
        return rows

    def text(self, now: float, *, arguments: bool = True) -> str:
        """The card as plain text: the summary, its rows, then the arguments once."""
        lines = [self.summary, ""]
        if self.question and self.summary != self.question:
            lines += [self.question, ""]
        if self.options:
            lines += ["Suggested answers:", *(f"  - {o}" for o in self.options), ""]
        for label, value in self.facts(now):
            if label == _ESCALATED and self.escalation is not None:
                # one sentence, as the pages and the status route's line say it
                lines.append(self.escalation.line(now))
            elif "\n" in value or len(value) > 60:
                lines += [f"{label}:", *(f"  {line}" for line in value.splitlines()), ""]
            else:
                lines.append(f"{label}: {value}")
        if arguments and self.kind == "approval":
            lines += ["", f"Arguments ({self.tool}):", self.arguments]
        return "\n".join(lines).strip() + "\n"
