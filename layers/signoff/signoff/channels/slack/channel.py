"""The Slack channel: a Block Kit message with buttons, posted with a bot token.

``chat.postMessage`` has no idempotency key, so the channel makes its own:

- every message carries a hidden marker, Slack message ``metadata``
  ``{"event_type": "signoff_notification", "event_payload": {"idempotency_key": key}}``
  (``key`` the row's channel key, so two signoff channels posting into one
  Slack channel never take each other's message);
- the posted message's ``ts`` is the receipt, which the notifier records in its
  own outbox write right after the post; a retry handed that receipt posts nothing;
- a retry whose earlier attempt left no receipt (``previous.unconfirmed_since``:
  the process stopped between the post and the record) first reads the
  channel's recent history (``conversations.history`` with
  ``include_all_metadata``, the newest 100 messages since the row was created)
  and adopts a message carrying its marker instead of posting again.

The lookup needs the ``channels:history`` scope (``groups:history`` for a
private channel). Without it, or when the message has scrolled past the newest
100, the retry posts: a second message beats no message (at least once).

Slack answers most failures with HTTP 200 and ``{"ok": false, "error": ...}``;
rate limits come as HTTP 429 with ``Retry-After``. Clicks on the buttons are
read by ``channels.slack_interactions``.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Self
from urllib.parse import urlencode

from signoff.approver.display import visible
from signoff.approver.edits import MAX_REASON_CHARS
from signoff.channels._chat import in_transit, message_ref, numbered, require_buttons
from signoff.channels.base import Delivery, already_sent
from signoff.channels.slack.interactions import (
    ANSWER_ACTION_PREFIX,
    APPROVE_ACTION,
    DENY_ACTION,
    OPEN_ACTION,
    REASON_ACTION,
    REASON_BLOCK,
)
from signoff.errors import SendFailed
from signoff.http_errors import RETRYABLE, map_httpx_errors, retry_after

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import httpx

    from signoff.channels.build import BuildContext
    from signoff.channels.notification import Notification
    from signoff.channels.settings.slack import SlackSettings

__all__ = ["MARKER_EVENT", "SLACK_API", "SlackChannel", "render_blocks"]

SLACK_API: Final = "https://slack.com/api"
MARKER_EVENT: Final = "signoff_notification"
# How far the lookup reads back: one page of the channel's newest messages since
# the row was created, less a margin for the clocks of Slack and this process.
_HISTORY_LIMIT: Final = 100
_CLOCK_MARGIN: Final = 300.0

_log = logging.getLogger(__name__)

# Logical errors (HTTP 200, ok: false) that a later attempt can get past. Slack
# documents internal_error / fatal_error as "some aspect may have succeeded":
# retrying those risks a second message, which beats never notifying anyone.
_RETRYABLE_ERRORS: Final = frozenset(
    {
        "ratelimited",
        "rate_limited",
        "internal_error",
        "fatal_error",
        "service_unavailable",
        "request_timeout",
    }
)

# Block Kit limits (characters): a header's text, a section's text, a button's label
# and value, and the top-level ``text`` fallback that notifications and search show.
_HEADER_MAX: Final = 150
_SECTION_MAX: Final = 3000
_BUTTON_TEXT_MAX: Final = 75
_BUTTON_VALUE_MAX: Final = 2000
_TEXT_MAX: Final = 4000
_MAX_OPTION_BUTTONS: Final = 20  # an actions block holds 25 elements; one is the link button


class SlackChannel:
    """Posts notifications to one Slack channel and updates them with the outcome."""

    def __init__(
        self,
        name: str,
        channel_id: str,
        bot_token: str,
        *,
        client: httpx.Client,
        base_url: str = SLACK_API,
        approvers: Sequence[str] = (),
    ) -> None:
        self.name = name
        # Who may decide by clicking (empty: anyone in the chat). The notifier sends
        # such a channel no link that decides without naming who decides.
        self.approvers = tuple(approvers)
        self.channel_id = channel_id
        self._token = bot_token
        self._client = client
        self._base_url = base_url.rstrip("/")

    @classmethod
    def from_config(
        cls,
        settings: SlackSettings,
        context: BuildContext,
        *,
        name: str = "slack",
    ) -> Self:
        """Build the channel, reading the bot token from ``secrets``.

        Raises:
            SecretMissing: the bot token secret is not set.
            StoreUnavailable: the secret source failed transiently.
        """
        return cls(
            name,
            settings.channel_id,
            context.secrets.get(settings.bot_token.secret),
            client=context.http(),
            base_url=settings.base_url,
            approvers=settings.approvers,
        )

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Post the notification, unless ``previous`` shows it was posted already.

        Raises:
            SendFailed: Slack refused the message or could not be reached.
        """
        # An earlier attempt whose ts we hold (its post succeeded, recording it
        # did not) IS the message; posting again would show the same approval twice.
        if already_sent(previous, "ts"):
            return previous
        require_buttons(self.name, notification)
        if previous is not None and previous.unconfirmed_since is not None:
            found = self._find_marked(idempotency_key, previous.unconfirmed_since)
            if found is not None:
                return found
        payload = {
            "channel": self.channel_id,
            "text": _fallback(notification),
            "blocks": render_blocks(notification),
            "unfurl_links": False,
            "unfurl_media": False,
            "metadata": {
                "event_type": MARKER_EVENT,
                "event_payload": {"idempotency_key": idempotency_key},
            },
        }
        answer = self._call("chat.postMessage", payload)
        ts = answer.get("ts")
        if not isinstance(ts, str) or not ts:
            # ok: true means the message exists; retrying would post a second one.
            raise SendFailed(
                self.name, "chat.postMessage answered ok without a ts", retryable=False
            )
        channel = answer.get("channel")
        return Delivery(
            receipt={"ts": ts, "channel": channel if isinstance(channel, str) else self.channel_id}
        )

    def _find_marked(self, idempotency_key: str, since: float) -> Delivery | None:
        """The receipt of a message in the channel's recent history carrying our marker.

        None when there is none, or when the history cannot be read for good (a
        missing scope): the caller then posts, as at least once beats never.

        Raises:
            SendFailed: the history failed transiently (retryable), so the retry
                looks again instead of risking a second message.
        """
        try:
            answer = self._call(
                "conversations.history",
                {
                    "channel": self.channel_id,
                    "oldest": f"{max(since - _CLOCK_MARGIN, 0.0):.6f}",
                    "limit": _HISTORY_LIMIT,
                    "include_all_metadata": "true",
                },
                form=True,
            )
        except SendFailed as failure:
            if failure.retryable:
                raise
            _log.warning(
                "slack channel %s cannot look for an earlier post of %s (%s); posting",
                self.name,
                idempotency_key,
                failure.reason,
            )
            return None
        messages = answer.get("messages")
        for message in messages if isinstance(messages, list) else []:
            if _marker(message) == idempotency_key and isinstance(message.get("ts"), str):
                return Delivery(receipt={"ts": message["ts"], "channel": self.channel_id})
        return None

    def refresh(self, receipt: Mapping[str, str], notification: Notification) -> None:
        """Redraw the posted message as ``notification`` (``chat.update``), buttons kept.

        Raises:
            SendFailed: the receipt names no message, or Slack refused the update.
        """
        ts = message_ref(self.name, dict(receipt), "ts", "message ts")
        payload = {
            "channel": receipt.get("channel") or self.channel_id,
            "ts": ts,
            "text": _fallback(notification),
            "blocks": render_blocks(notification),
        }
        self._call("chat.update", payload)

    def update_outcome(self, receipt: dict[str, str], text: str) -> None:
        """Replace the posted message with ``text`` (the outcome and who decided), no buttons.

        Raises:
            SendFailed: the receipt names no message, or Slack refused the update.
        """
        ts = message_ref(self.name, receipt, "ts", "message ts")
        shown = _escape(text)
        payload = {
            "channel": receipt.get("channel") or self.channel_id,
            "ts": ts,
            "text": _clip(shown, _TEXT_MAX),
            "blocks": [{"type": "section", "text": _mrkdwn(_clip(shown, _SECTION_MAX))}],
        }
        self._call("chat.update", payload)

    def _call(self, method: str, payload: dict[str, Any], *, form: bool = False) -> dict[str, Any]:
        """POST one Web API method; the parsed answer when ``ok``, else ``SendFailed``.

        ``form`` sends the payload form-encoded: Slack takes JSON bodies only for
        its write methods, so a read method (``conversations.history``) is a form.
        """
        if form:
            body = urlencode(payload).encode()
            # the token stays in the header, never in a logged form or URL
            content_type = "application/x-www-form-urlencoded"
        else:
            body = json.dumps(payload).encode()
            # Slack warns (missing_charset) when a JSON body does not say utf-8.
            content_type = "application/json; charset=utf-8"
        with map_httpx_errors(in_transit(self.name, method)):
            response = self._client.post(
                f"{self._base_url}/{method}",
                content=body,
                headers={"Authorization": f"Bearer {self._token}", "Content-Type": content_type},
                follow_redirects=False,
            )
        status = response.status_code
        if status == 429:
            raise SendFailed(
                self.name,
                f"{method}: ratelimited",
                retryable=True,
                status=status,
                retry_after=retry_after(response.headers),
            )
        if status != 200:
            raise SendFailed(
                self.name,
                f"{method}: HTTP {status}",
                retryable=status in RETRYABLE,
                status=status,
            )
        try:
            answer = response.json()
        except ValueError as exc:
            # A 200 that is not JSON is a proxy or an outage page, not Slack's verdict.
            raise SendFailed(
                self.name, f"{method}: unreadable answer", retryable=True, status=status
            ) from exc
        if not isinstance(answer, dict):
            raise SendFailed(
                self.name, f"{method}: unreadable answer", retryable=True, status=status
            )
        if answer.get("ok") is True:
            return answer
        error = answer.get("error")
        error = error if isinstance(error, str) and error else "unknown_error"
        raise SendFailed(
            self.name,
            f"{method}: {error}",
            retryable=error in _RETRYABLE_ERRORS,
            status=status,
            retry_after=retry_after(response.headers),
        )


def _marker(message: Any) -> str | None:
    """The idempotency key of signoff's hidden marker on a history ``message``, if any."""
    metadata = message.get("metadata") if isinstance(message, dict) else None
    if not isinstance(metadata, dict) or metadata.get("event_type") != MARKER_EVENT:
        return None
    payload = metadata.get("event_payload")
    key = payload.get("idempotency_key") if isinstance(payload, dict) else None
    return key if isinstance(key, str) else None


def render_blocks(notification: Notification) -> list[dict[str, Any]]:
    """The Block Kit blocks for a notification: header, body, context and its buttons."""
    blocks: list[dict[str, Any]] = [
        {
            "type": "header",
            "text": {
                "type": "plain_text",
                # a header block refuses empty text
                "text": _clip(
                    visible(notification.title or notification.kind.capitalize()), _HEADER_MAX
                ),
            },
        }
    ]
    if notification.kind == "question":
        blocks.append(_section(notification.question or notification.body))
        if notification.options:
            blocks.append(_section(numbered(notification.options)))
    else:
        # a composed approval's card rows; its arguments follow in the tool section
        body = notification.card_rows() or notification.body
        if body:
            blocks.append(_section(body))
        if notification.kind == "approval" and notification.tool:
            blocks.append(_tool_section(notification.tool, notification.args))
    if notification.note:
        blocks.append(_section(notification.note))
    context = _context(notification)
    if context:
        blocks.append({"type": "context", "elements": [_mrkdwn(" · ".join(context))]})
    buttons = _buttons(notification)
    if buttons and notification.kind == "approval":
        blocks.append(_reason_input())
    if buttons:
        blocks.append({"type": "actions", "block_id": "signoff", "elements": buttons})
    return blocks


_REASON_LABEL: Final = "Reason (optional; the agent reads it if you deny)"


def _reason_input() -> dict[str, Any]:
    """A text field above Approve / Deny; Slack sends its text with the click (a deny's reason)."""
    return {
        "type": "input",
        "block_id": REASON_BLOCK,
        "optional": True,
        "label": {"type": "plain_text", "text": _REASON_LABEL},
        "element": {
            "type": "plain_text_input",
            "action_id": REASON_ACTION,
            "max_length": MAX_REASON_CHARS,
        },
    }


def _buttons(notification: Notification) -> list[dict[str, Any]]:
    pending_id = notification.pending_id
    if pending_id is None:
        return []
    if notification.kind == "approval":
        return [
            _button(APPROVE_ACTION, "Approve", pending_id, style="primary"),
            _button(DENY_ACTION, "Deny", pending_id, style="danger"),
        ]
    if notification.kind != "question":
        return []
    buttons = []
    for index, option in enumerate((notification.options or [])[:_MAX_OPTION_BUTTONS]):
        value = json.dumps({"pendingId": pending_id, "answer": option}, separators=(",", ":"))
        # The value carries the whole answer; one too long for a button is still
        # listed in the message and can be given on the answer page.
        if len(value) <= _BUTTON_VALUE_MAX:
            buttons.append(_button(f"{ANSWER_ACTION_PREFIX}{index}", option, value))
    link, label = _page_link(notification, bool(buttons))
    if link:
        open_button = _button(OPEN_ACTION, label, pending_id)
        open_button["url"] = link
        buttons.append(open_button)
    return buttons


def _page_link(notification: Notification, beside_buttons: bool) -> tuple[str | None, str]:
    """The question's page and its button's words: answer there, or only look at it.

    A notification without an ``answerUrl`` (one for a channel with approvers)
    links a page that takes no answer, and says so.
    """
    if notification.answer_url:
        return notification.answer_url, "Answer in browser" if beside_buttons else "Answer"
    return notification.link_url, "View in browser"


def _button(action_id: str, label: str, value: str, *, style: str | None = None) -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": _clip(visible(label), _BUTTON_TEXT_MAX)},
        "value": value,
    }
    if style:
        button["style"] = style
    return button


def _tool_section(tool: str, args: dict[str, Any] | None) -> dict[str, Any]:
    head = f"*Tool* `{_escape(tool)}`"
    arguments = json.dumps(args or {}, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    room = _SECTION_MAX - len(head) - len("\n``````")
    return {"type": "section", "text": _mrkdwn(f"{head}\n```{_clip(_escape(arguments), room)}```")}


def _context(notification: Notification) -> list[str]:
    parts = [f"Agent *{_escape(notification.agent)}*"]
    if notification.tenant:
        parts.append(f"tenant *{_escape(notification.tenant)}*")
    if notification.expires_at:
        parts.append(f"expires {_date(notification.expires_at)}")
    return parts


def _date(moment: str) -> str:
    """Slack's date token, shown in each reader's own time zone; the raw text as fallback."""
    try:
        epoch = int(datetime.fromisoformat(moment).timestamp())
    except ValueError:
        return _escape(moment)
    return f"<!date^{epoch}^{{date_short_pretty}} {{time}}|{_escape(moment)}>"


def _fallback(notification: Notification) -> str:
    """The ``text`` shown in push notifications and where blocks cannot be."""
    lines = [notification.title]
    if notification.kind == "question" and notification.question:
        lines.append(notification.question)
    elif notification.body:
        lines.append(notification.body)
    return _clip(_escape("\n".join(lines)), _TEXT_MAX)


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(_clip(_escape(text), _SECTION_MAX))}


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}


def _escape(text: str) -> str:
    """Slack's three control characters; agent output must not become <!channel> or a link.

    Hidden characters (bidi overrides, zero-width, controls) are shown escaped first.
    """
    return visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, an ellipsis marking the cut; never half an ``&amp;``."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    amp = cut.rfind("&", max(0, len(cut) - 4))
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    return cut + "…"
