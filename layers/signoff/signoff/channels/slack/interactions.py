"""Inbound Slack clicks: verify the request signature, then read which button was pressed.

Slack signs every interaction request with the app's signing secret: the
``v0`` scheme is ``HMAC-SHA256(secret, "v0:{X-Slack-Request-Timestamp}:{raw body}")``
in hex, sent as ``X-Slack-Signature: v0=<hex>``. A request older than five
minutes is refused so a captured click cannot be replayed later.

The click itself arrives as a form body with one ``payload`` field holding the
``block_actions`` JSON; the buttons were built by ``channels.slack`` with the
action ids defined here. An approval's message also has a reason field: Slack
sends what was typed in it with the click (``state.values``), and a Deny
carries it as its reason.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import parse_qs

from signoff.approver.edits import MAX_REASON_CHARS
from signoff.channels import _inbound
from signoff.channels._inbound import TOLERANCE_SECONDS, ButtonPress, object_at, text_at
from signoff.errors import BadForm, InvalidSignature

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "ANSWER_ACTION_PREFIX",
    "APPROVE_ACTION",
    "DENY_ACTION",
    "OPEN_ACTION",
    "REASON_ACTION",
    "REASON_BLOCK",
    "TOLERANCE_SECONDS",
    "SlackAction",
    "parse_slack_action",
    "verify_slack_request",
]

APPROVE_ACTION: Final = "signoff_approve"
DENY_ACTION: Final = "signoff_deny"
# Followed by the option's index: ``signoff_answer:2``; action ids must be unique per message.
ANSWER_ACTION_PREFIX: Final = "signoff_answer:"
# The link button to the answer page; Slack still posts a click for it, which changes nothing.
OPEN_ACTION: Final = "signoff_open"
# The approval message's input block for a deny's reason, and its text input.
REASON_BLOCK: Final = "signoff_reason"
REASON_ACTION: Final = "reason"

_VERSION: Final = "v0"
_SOURCE: Final = "slack"

Kind = Literal["approve", "deny", "answer", "open"]


@dataclass(frozen=True, kw_only=True)
class SlackAction(ButtonPress):
    """One button click: who pressed what, on which pending item and message."""

    kind: Kind
    user_id: str
    action_id: str
    user_name: str | None = None
    team_id: str | None = None
    channel_id: str | None = None
    message_ts: str | None = None
    response_url: str | None = None
    # what was typed in the message's reason field when Deny was pressed
    note: str | None = None

    @property
    def receipt(self) -> dict[str, str] | None:
        """The clicked message as ``SlackChannel`` recorded it (to update), if it is known."""
        if not self.message_ts:
            return None
        return {"ts": self.message_ts, **({"channel": self.channel_id} if self.channel_id else {})}


def verify_slack_request(
    headers: Mapping[str, str], body: str, signing_secret: str, now: float
) -> None:
    """Check the ``v0`` signature and the timestamp of a request from Slack.

    ``body`` is the raw request body exactly as received: the signature covers
    its bytes, so it must be checked before any form or JSON decoding.

    Raises:
        InvalidSignature: a header is missing or malformed, the timestamp is more
            than five minutes from ``now``, or the signature does not match.
    """
    with _inbound.unforeseen_as_invalid_signature(_SOURCE):
        _verify(headers, body, signing_secret, now)


def _verify(headers: Mapping[str, str], body: str, signing_secret: str, now: float) -> None:
    if not signing_secret:
        raise InvalidSignature(_SOURCE, "no signing secret configured")
    timestamp, signature = _inbound.signature_headers(
        _SOURCE, headers, "x-slack-request-timestamp", "x-slack-signature"
    )
    _inbound.check_timestamp(_SOURCE, timestamp, now)
    base = f"{_VERSION}:{timestamp}:{body}".encode()
    expected = f"{_VERSION}=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()
    _inbound.check_digest(_SOURCE, expected, signature)


def parse_slack_action(body: str) -> SlackAction:
    """Read the ``block_actions`` payload of a verified interaction request.

    Raises:
        BadForm: no single ``payload`` field, JSON that is not a ``block_actions``
            payload, or a click on a button that signoff did not build.
    """
    with _inbound.unforeseen_as_bad_form("payload"):
        return _parse(body)


def _parse(body: str) -> SlackAction:
    fields = parse_qs(body, keep_blank_values=True)
    values = fields.get("payload", [])
    if len(values) != 1:
        raise BadForm("payload", "expected exactly one payload field")
    payload = json.loads(values[0])
    if not isinstance(payload, dict) or payload.get("type") != "block_actions":
        raise BadForm("payload", "not a block_actions payload")
    actions = payload.get("actions")
    if not isinstance(actions, list) or not actions or not isinstance(actions[0], dict):
        raise BadForm("payload", "no action")
    # signoff's messages carry one actions block and Slack reports the one button pressed.
    action: dict[str, Any] = actions[0]
    user = object_at(payload, "user")
    user_id = text_at(user, "id")
    if user_id is None:
        raise BadForm("payload", "no user id")
    action_id = text_at(action, "action_id") or ""
    kind, pending_id, answer = _button(action_id, text_at(action, "value"))
    container = object_at(payload, "container")
    return SlackAction(
        note=_reason(payload) if kind == "deny" else None,
        kind=kind,
        user_id=user_id,
        action_id=action_id,
        pending_id=pending_id,
        answer=answer,
        user_name=text_at(user, "username") or text_at(user, "name"),
        team_id=text_at(object_at(payload, "team"), "id") or text_at(user, "team_id"),
        channel_id=text_at(object_at(payload, "channel"), "id") or text_at(container, "channel_id"),
        message_ts=text_at(container, "message_ts") or text_at(object_at(payload, "message"), "ts"),
        response_url=text_at(payload, "response_url"),
    )


def _reason(payload: Mapping[str, Any]) -> str | None:
    """The reason typed beside the buttons (Slack sends every input's state with a click)."""
    values = object_at(object_at(payload, "state"), "values")
    typed = text_at(object_at(object_at(values, REASON_BLOCK), REASON_ACTION), "value")
    reason = (typed or "").strip()
    if len(reason) > MAX_REASON_CHARS:
        raise BadForm("payload", f"a reason of at most {MAX_REASON_CHARS} characters")
    return reason or None


def _button(action_id: str, value: str | None) -> tuple[Kind, str, str | None]:
    """What the pressed button means, from the ids and values ``channels.slack`` gave it."""
    if not value:
        raise BadForm("payload", "the button carries no value")
    if action_id == APPROVE_ACTION:
        return "approve", value, None
    if action_id == DENY_ACTION:
        return "deny", value, None
    if action_id == OPEN_ACTION:
        return "open", value, None
    index = action_id.removeprefix(ANSWER_ACTION_PREFIX)
    if index != action_id and index.isascii() and index.isdigit():
        carried = json.loads(value)
        if not isinstance(carried, dict):
            raise BadForm("payload", "an answer button without its answer")
        pending_id, answer = carried.get("pendingId"), carried.get("answer")
        if not isinstance(pending_id, str) or not pending_id or not isinstance(answer, str):
            raise BadForm("payload", "an answer button without its answer")
        return "answer", pending_id, answer
    raise BadForm("payload", f"not a signoff button: {action_id[:64]!r}")
