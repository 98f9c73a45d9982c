"""What a GitHub comment of the GitHub channel says: its hidden marker and its Markdown.

Text a model wrote is shown as it is: hidden characters as their escapes
(``signoff.approver.display.visible``), then Markdown and HTML neutralised, so it can
neither format, link, hide text nor @-mention anyone.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Final

from signoff.approver.display import visible

if TYPE_CHECKING:
    from signoff.channels.notification import Notification

__all__ = ["marker", "render"]

_BODY_MAX: Final = 65536  # GitHub refuses a longer comment body
# Markdown that model-written text could use to format, link, hide or ping.
_MARKDOWN: Final = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def marker(key: str) -> str:
    """The hidden first line of the comment sent with the channel key ``key``."""
    # "--" would end the HTML comment early; keys are ids and channel names, so
    # this never changes a real key, only keeps a strange one inside the comment.
    return f"<!-- signoff:{key.replace('--', '-&#45;')} -->"


def render(notification: Notification, idempotency_key: str) -> str:
    """The comment's Markdown: marker, title, body, tool call, link, context.

    Text a model wrote is shown as it is: hidden characters as their escapes
    (``visible``), then Markdown and HTML neutralised, so it can neither format,
    link, hide text nor @-mention anyone. The marker is the first line, where no
    model-written text can stand, so a comment quoting a marker is never adopted.
    """
    parts = [marker(idempotency_key), f"### {_text(notification.title or notification.kind)}"]
    if notification.kind == "question":
        parts.append(_text(notification.question or notification.body))
        parts.extend(f"{i + 1}\\. {_text(o)}" for i, o in enumerate(notification.options or []))
    elif notification.body:
        parts.append(_text(notification.body))
    if notification.kind == "approval" and notification.tool:
        arguments = json.dumps(
            notification.args or {}, indent=2, sort_keys=True, ensure_ascii=False, default=str
        )
        parts.append(f"**Tool** {_code(notification.tool)}\n\n{_block(visible(arguments))}")
    if notification.note:
        parts.append(_text(notification.note))
    if notification.link_url:
        verb = "Review and decide" if notification.resume_token else "View"
        parts.append(f"[{verb}](<{notification.link_url}>)")
    context = [f"agent {_code(notification.agent)}", f"run {_code(notification.run_id)}"]
    if notification.expires_at:
        context.append(f"expires {_code(notification.expires_at)}")
    parts.append("<sub>" + " · ".join(context) + "</sub>")
    body = "\n\n".join(parts)
    return body if len(body) <= _BODY_MAX else body[: _BODY_MAX - 1] + "…"


def _text(text: str) -> str:
    # Markdown first, then the entities (whose "#" and "&" must stay as written).
    shown = _MARKDOWN.sub(r"\\\1", visible(text))
    return shown.replace("&", "&amp;").replace("<", "&lt;").replace("@", "&#64;")


def _code(text: str) -> str:
    """An inline code span that ``text`` cannot close."""
    shown = visible(text, lines=False)
    fence = "`" * (max((len(r) for r in re.findall(r"`+", shown)), default=0) + 1)
    return f"{fence} {shown} {fence}"


def _block(text: str) -> str:
    """A fenced code block that ``text`` cannot close."""
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}json\n{text}\n{fence}"
