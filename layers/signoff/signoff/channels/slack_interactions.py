"""Inbound Slack clicks: verify the request signature, then read which button was pressed.

Slack signs every interaction request with the app's signing secret: the
``v0`` scheme is ``HMAC-SHA256(secret, "v0:{X-Slack-Request-Timestamp}:{raw body}")``
in hex, sent as ``X-Slack-Signature: v0=<hex>``. A request older than five
minutes is refused so a captured click cannot be replayed later.

The click itself arrives as a form body with one ``payload`` field holding the
``block_actions`` JSON; the buttons were built by ``channels.slack`` with the
action ids defined here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import parse_qs

from signoff.errors import BadForm, InvalidSignature

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "ANSWER_ACTION_PREFIX",
    "APPROVE_ACTION",
    "DENY_ACTION",
    "OPEN_ACTION",
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

TOLERANCE_SECONDS: Final = 5 * 60
_VERSION: Final = "v0"
_SOURCE: Final = "slack"

Kind = Literal["approve", "deny", "answer", "open"]


@dataclass(frozen=True, kw_only=True)
class SlackAction:
    """One button click: who pressed what, on which pending item and message."""

    kind: Kind
    user_id: str
    action_id: str
    pending_id: str
    answer: str | None = None
    user_name: str | None = None
    team_id: str | None = None
    channel_id: str | None = None
    message_ts: str | None = None
    response_url: str | None = None

    @property
    def decision(self) -> Literal["approve", "deny"] | None:
        """``approve`` / ``deny`` for the approval buttons, else ``None``."""
        if self.kind == "approve" or self.kind == "deny":
            return self.kind
        return None


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
    # Anything unexpected while verifying (odd header types, a non-ASCII
    # signature, surrogates in the body) is a failed verification: the caller
    # answers 401 for this one error and never sees a 500 from attacker input.
    try:
        _verify(headers, body, signing_secret, now)
    except InvalidSignature:
        raise
    except Exception as exc:
        raise InvalidSignature(_SOURCE, f"unreadable request: {type(exc).__name__}") from exc


def _verify(headers: Mapping[str, str], body: str, signing_secret: str, now: float) -> None:
    if not signing_secret:
        raise InvalidSignature(_SOURCE, "no signing secret configured")
    lowered = {str(key).lower(): value for key, value in headers.items()}
    timestamp = lowered.get("x-slack-request-timestamp")
    signature = lowered.get("x-slack-signature")
    if not isinstance(timestamp, str) or not isinstance(signature, str):
        raise InvalidSignature(_SOURCE, "missing signature headers")
    # int() alone would accept " 12", "+12" or "1_2"; only plain digits are a Slack timestamp.
    if not timestamp.isascii() or not timestamp.isdigit():
        raise InvalidSignature(_SOURCE, "timestamp is not a Unix time")
    if abs(now - int(timestamp)) > TOLERANCE_SECONDS:
        raise InvalidSignature(_SOURCE, "timestamp outside the five-minute window")
    base = f"{_VERSION}:{timestamp}:{body}".encode()
    expected = f"{_VERSION}=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()
    # compare_digest on str needs ASCII on both sides; encoding keeps it constant-time
    # and lets a non-ASCII header fail as a mismatch rather than a TypeError.
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        raise InvalidSignature(_SOURCE, "signature mismatch")


def parse_slack_action(body: str) -> SlackAction:
    """Read the ``block_actions`` payload of a verified interaction request.

    Raises:
        BadForm: no single ``payload`` field, JSON that is not a ``block_actions``
            payload, or a click on a button that signoff did not build.
    """
    try:
        return _parse(body)
    except BadForm:
        raise
    except Exception as exc:
        # A verified body comes from Slack, but a shape we did not foresee is still
        # a malformed form to the caller (400), never an unhandled error.
        raise BadForm("payload", f"unreadable ({type(exc).__name__})") from exc


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
    user = _object(payload, "user")
    user_id = _text(user, "id")
    if user_id is None:
        raise BadForm("payload", "no user id")
    action_id = _text(action, "action_id") or ""
    kind, pending_id, answer = _button(action_id, _text(action, "value"))
    container = _object(payload, "container")
    return SlackAction(
        kind=kind,
        user_id=user_id,
        action_id=action_id,
        pending_id=pending_id,
        answer=answer,
        user_name=_text(user, "username") or _text(user, "name"),
        team_id=_text(_object(payload, "team"), "id") or _text(user, "team_id"),
        channel_id=_text(_object(payload, "channel"), "id") or _text(container, "channel_id"),
        message_ts=_text(container, "message_ts") or _text(_object(payload, "message"), "ts"),
        response_url=_text(payload, "response_url"),
    )


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


def _object(parent: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def _text(parent: Mapping[str, Any], key: str) -> str | None:
    value = parent.get(key)
    return value if isinstance(value, str) and value else None
