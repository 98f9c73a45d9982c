"""Inbound Lark callbacks: the URL-verification challenge and card button clicks.

Lark proves a request is its own in two ways. The Verification Token is a
static shared value carried in the body (``token`` for the challenge,
``header.token`` in the v2 callback schema). With an Encrypt Key configured,
every body arrives as ``{"encrypt": base64(iv + AES-256-CBC(payload))}`` under
the key ``SHA-256(encrypt_key)``, and every callback except the challenge is
signed: ``X-Lark-Signature = hex(SHA-256(timestamp + nonce + encrypt_key + raw
body))`` with ``X-Lark-Request-Timestamp`` / ``X-Lark-Request-Nonce``. Only that
signature covers a timestamp, so only with an Encrypt Key are replays older
than five minutes refused; deployments should set one.

Whatever cannot be authenticated is ``InvalidSignature`` (401); an
authenticated callback we cannot read is ``BadForm`` (400); nothing else escapes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from signoff.channels import _inbound
from signoff.channels._inbound import TOLERANCE_SECONDS, ButtonPress, object_at, text_at
from signoff.errors import BadForm, InvalidSignature

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CARD_ACTION_EVENT",
    "TOLERANCE_SECONDS",
    "LarkAction",
    "LarkChallenge",
    "decrypt_lark_body",
    "lark_callback",
    "lark_signature",
]

CARD_ACTION_EVENT: Final = "card.action.trigger"
_SOURCE: Final = "lark"
_BLOCK: Final = 16  # AES block and IV size, bytes

Kind = Literal["approve", "deny", "answer"]


@dataclass(frozen=True, kw_only=True)
class LarkChallenge:
    """The URL-verification handshake: answer it with ``response()`` within a second."""

    challenge: str

    def response(self) -> dict[str, str]:
        """The JSON body Lark expects back."""
        return {"challenge": self.challenge}


@dataclass(frozen=True, kw_only=True)
class LarkAction(ButtonPress):
    """One card button click: who pressed what, on which pending item and message."""

    kind: Kind
    open_id: str
    user_id: str | None = None
    tenant_key: str | None = None
    message_id: str | None = None
    chat_id: str | None = None
    event_id: str | None = None

    @property
    def receipt(self) -> dict[str, str] | None:
        """The clicked card as ``LarkChannel`` recorded it (to update), if it is known."""
        return {"message_id": self.message_id} if self.message_id else None


def lark_callback(
    body: str | bytes,
    headers: Mapping[str, str],
    verification_token: str,
    encrypt_key: str | None = None,
    *,
    now: float,
) -> LarkChallenge | LarkAction:
    """Authenticate a callback request and say what it is.

    ``body`` is the raw request body exactly as received: the signature covers
    its bytes. ``now`` is Unix time in seconds.

    Raises:
        InvalidSignature: the request cannot be shown to come from Lark: a wrong
            or missing token, a bad or stale signature, an undecryptable or
            unreadable body.
        BadForm: an authenticated callback that is not a card click signoff built.
    """
    with _inbound.unforeseen_as_invalid_signature(_SOURCE):
        raw = body.decode() if isinstance(body, bytes) else body
        payload = _authenticate(raw, headers, verification_token, encrypt_key, now)
    if isinstance(payload, LarkChallenge):
        return payload
    with _inbound.unforeseen_as_bad_form("event"):
        return _action(payload)


def lark_signature(timestamp: str, nonce: str, encrypt_key: str, body: str) -> str:
    """``X-Lark-Signature`` for a body: hex SHA-256 of the four parts concatenated."""
    return hashlib.sha256(f"{timestamp}{nonce}{encrypt_key}{body}".encode()).hexdigest()


def decrypt_lark_body(encrypted: str, encrypt_key: str) -> str:
    """The plaintext of an ``encrypt`` field: AES-256-CBC, key SHA-256(encrypt_key), IV first.

    Raises:
        InvalidSignature: not base64, not whole blocks, bad padding or not UTF-8,
            which is what a wrong key or a forged body looks like.
    """
    # Only deployments with an Encrypt Key need AES: load it on first use.
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    try:
        data = base64.b64decode(encrypted, validate=True)
        if len(data) < 2 * _BLOCK or len(data) % _BLOCK:
            raise InvalidSignature(_SOURCE, "encrypted body of the wrong length")
        key = hashlib.sha256(encrypt_key.encode()).digest()
        decryptor = Cipher(algorithms.AES(key), modes.CBC(data[:_BLOCK])).decryptor()
        padded = decryptor.update(data[_BLOCK:]) + decryptor.finalize()
        unpadder = padding.PKCS7(8 * _BLOCK).unpadder()
        return (unpadder.update(padded) + unpadder.finalize()).decode()
    except InvalidSignature:
        raise
    except (binascii.Error, ValueError) as exc:
        raise InvalidSignature(_SOURCE, "undecryptable body") from exc


def _authenticate(
    raw: str,
    headers: Mapping[str, str],
    verification_token: str,
    encrypt_key: str | None,
    now: float,
) -> LarkChallenge | dict[str, Any]:
    """The verified plaintext callback, or the challenge to answer."""
    if not verification_token:
        raise InvalidSignature(_SOURCE, "no verification token configured")
    outer = _jsonobject_at(raw)
    if encrypt_key:
        encrypted = outer.get("encrypt")
        if not isinstance(encrypted, str):
            raise InvalidSignature(_SOURCE, "an Encrypt Key is set but the body is not encrypted")
        payload = _jsonobject_at(decrypt_lark_body(encrypted, encrypt_key))
    elif "encrypt" in outer:
        raise InvalidSignature(_SOURCE, "an encrypted body but no Encrypt Key configured")
    else:
        payload = outer
    if payload.get("type") == "url_verification":
        # Lark does not sign the challenge; its token (and, with a key, the
        # encryption) is the proof, as in Lark's own SDKs.
        _check_token(payload.get("token"), verification_token)
        challenge = payload.get("challenge")
        if not isinstance(challenge, str):
            raise InvalidSignature(_SOURCE, "a challenge without its challenge")
        return LarkChallenge(challenge=challenge)
    if encrypt_key:
        _check_signature(headers, raw, encrypt_key, now)
    header = payload.get("header")
    _check_token(header.get("token") if isinstance(header, dict) else None, verification_token)
    return payload


def _check_token(token: object, verification_token: str) -> None:
    if not isinstance(token, str) or not hmac.compare_digest(
        token.encode(), verification_token.encode()
    ):
        raise InvalidSignature(_SOURCE, "verification token mismatch")


def _check_signature(headers: Mapping[str, str], raw: str, encrypt_key: str, now: float) -> None:
    timestamp, nonce, signature = _inbound.signature_headers(
        _SOURCE, headers, "x-lark-request-timestamp", "x-lark-request-nonce", "x-lark-signature"
    )
    _inbound.check_timestamp(_SOURCE, timestamp, now)
    _inbound.check_digest(_SOURCE, lark_signature(timestamp, nonce, encrypt_key, raw), signature)


def _jsonobject_at(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise InvalidSignature(_SOURCE, "the body is not a JSON object")
    return value


def _action(payload: dict[str, Any]) -> LarkAction:
    """Read a verified ``card.action.trigger`` (schema 2.0) callback."""
    header = object_at(payload, "header")
    if payload.get("schema") != "2.0" or header.get("event_type") != CARD_ACTION_EVENT:
        raise BadForm("event", "not a card.action.trigger callback")
    event = object_at(payload, "event")
    operator = object_at(event, "operator")
    open_id = text_at(operator, "open_id")
    if open_id is None:
        raise BadForm("event", "no operator open_id")
    action = object_at(event, "action")
    value = action.get("value")
    if isinstance(value, str):
        # Lark passes a button's value back as it was given; a string form is JSON.
        value = json.loads(value)
    if not isinstance(value, dict):
        raise BadForm("event", "the button carries no value")
    pending_id = text_at(value, "pendingId")
    if pending_id is None:
        raise BadForm("event", "the button carries no pendingId")
    decision, answer = value.get("decision"), value.get("answer")
    kind: Kind
    if decision == "approve" or decision == "deny":
        kind, answer = decision, None
    elif decision is None and isinstance(answer, str):
        kind = "answer"
    else:
        raise BadForm("event", "the button carries neither a decision nor an answer")
    context = object_at(event, "context")
    return LarkAction(
        kind=kind,
        open_id=open_id,
        pending_id=pending_id,
        answer=answer,
        user_id=text_at(operator, "user_id"),
        tenant_key=text_at(operator, "tenant_key") or text_at(header, "tenant_key"),
        message_id=text_at(context, "open_message_id"),
        chat_id=text_at(context, "open_chat_id"),
        event_id=text_at(header, "event_id"),
    )
