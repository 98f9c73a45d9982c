"""Lark's callback requests: the URL-verification challenge and card clicks, verified."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any

import pytest
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given, settings
from hypothesis import strategies as st

from signoff.channels.lark.callbacks import (
    LarkAction,
    LarkChallenge,
    decrypt_lark_body,
    lark_callback,
)
from signoff.errors import BadForm, InvalidSignature
from tests.support.chat import json_values

TOKEN = "vt-0123456789abcdef"
KEY = "encrypt-key-0123456789"
NOW = 1_700_000_000.0


def encrypt(plain: str, key: str = KEY) -> str:
    """Encrypt as Lark documents it: SHA-256 of the key, a random IV first, AES-256-CBC, PKCS#7."""
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plain.encode()) + padder.finalize()
    encryptor = Cipher(
        algorithms.AES(hashlib.sha256(key.encode()).digest()), modes.CBC(iv)
    ).encryptor()
    return base64.b64encode(iv + encryptor.update(padded) + encryptor.finalize()).decode()


def sign(
    body: str, timestamp: str = str(int(NOW)), nonce: str = "n-42", key: str = KEY
) -> dict[str, str]:
    """The headers Lark sends: hex SHA-256 of timestamp + nonce + encrypt key + raw body."""
    digest = hashlib.sha256(f"{timestamp}{nonce}{key}{body}".encode()).hexdigest()
    return {
        "X-Lark-Request-Timestamp": timestamp,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": digest,
    }


def card_action(value: Any, token: str = TOKEN, **changes: Any) -> dict[str, Any]:
    """A ``card.action.trigger`` callback in the v2 schema, as Lark posts it."""
    payload: dict[str, Any] = {
        "schema": "2.0",
        "header": {
            "event_id": "f7984f25108f8137722bb63cee927e66",
            "token": token,
            "create_time": "1700000000000",
            "event_type": "card.action.trigger",
            "tenant_key": "736588c9260f175d",
            "app_id": "cli_a5fb0ae6a4ae500d",
        },
        "event": {
            "operator": {
                "tenant_key": "736588c9260f175d",
                "user_id": "e33ggbyz",
                "open_id": "ou_3c4b3e1d5cbd5ee0a4b2c2d8b2e4b3c1",
            },
            "token": "c-295ee57216a5dc9de90fefd0aadb4b1d7d337f52",
            "action": {"value": value, "tag": "button"},
            "host": "im_message",
            "context": {
                "open_message_id": "om_x100b5a9a8e1b2c3d",
                "open_chat_id": "oc_a0553eda9014c201e6969b478895c230",
            },
        },
    }
    payload.update(changes)
    return payload


APPROVE = {"pendingId": "pend_01", "decision": "approve"}


# -- without an Encrypt Key: the Verification Token is the proof -----------------------


def test_the_url_verification_challenge_is_answered() -> None:
    body = json.dumps({"challenge": "ajls384kdjx98XX", "token": TOKEN, "type": "url_verification"})

    answer = lark_callback(body, {}, TOKEN, now=NOW)

    assert answer == LarkChallenge(challenge="ajls384kdjx98XX")
    assert isinstance(answer, LarkChallenge)
    assert answer.response() == {"challenge": "ajls384kdjx98XX"}


@pytest.mark.parametrize("token", ["wrong", "", None, 42])
def test_a_challenge_with_the_wrong_token_is_refused(token: Any) -> None:
    body = json.dumps({"challenge": "c", "token": token, "type": "url_verification"})

    with pytest.raises(InvalidSignature) as refused:
        lark_callback(body, {}, TOKEN, now=NOW)

    assert refused.value.source == "lark"


def test_a_card_click_is_read() -> None:
    answer = lark_callback(json.dumps(card_action(APPROVE)), {}, TOKEN, now=NOW)

    assert answer == LarkAction(
        kind="approve",
        open_id="ou_3c4b3e1d5cbd5ee0a4b2c2d8b2e4b3c1",
        pending_id="pend_01",
        user_id="e33ggbyz",
        tenant_key="736588c9260f175d",
        message_id="om_x100b5a9a8e1b2c3d",
        chat_id="oc_a0553eda9014c201e6969b478895c230",
        event_id="f7984f25108f8137722bb63cee927e66",
    )
    assert isinstance(answer, LarkAction)
    assert answer.decision == "approve"


def test_deny_and_an_option_answer_are_read() -> None:
    deny = lark_callback(
        json.dumps(card_action({"pendingId": "pend_01", "decision": "deny"})), {}, TOKEN, now=NOW
    )
    answered = lark_callback(
        json.dumps(card_action({"pendingId": "pend_02", "answer": "Savings"})), {}, TOKEN, now=NOW
    )

    assert isinstance(deny, LarkAction)
    assert (deny.kind, deny.decision, deny.answer) == ("deny", "deny", None)
    assert isinstance(answered, LarkAction)
    assert (answered.kind, answered.decision, answered.answer) == ("answer", None, "Savings")
    assert answered.pending_id == "pend_02"


def test_a_value_passed_back_as_a_json_string_is_read() -> None:
    answer = lark_callback(json.dumps(card_action(json.dumps(APPROVE))), {}, TOKEN, now=NOW)

    assert isinstance(answer, LarkAction)
    assert answer.kind == "approve"


def test_bytes_bodies_are_accepted() -> None:
    answer = lark_callback(json.dumps(card_action(APPROVE)).encode(), {}, TOKEN, now=NOW)

    assert isinstance(answer, LarkAction)


@pytest.mark.parametrize(
    "payload",
    [
        card_action(APPROVE, token="wrong"),
        card_action(APPROVE, token=""),
        card_action(APPROVE, header={"event_type": "card.action.trigger"}),
        card_action(APPROVE, header="x"),
        {"open_id": "ou_1", "token": TOKEN, "action": {"value": APPROVE}},  # the old v1 schema
    ],
    ids=["wrong-token", "empty-token", "no-token", "header-not-object", "v1-schema"],
)
def test_a_click_that_cannot_show_the_token_is_refused(payload: dict[str, Any]) -> None:
    with pytest.raises(InvalidSignature):
        lark_callback(json.dumps(payload), {}, TOKEN, now=NOW)


def test_no_configured_token_accepts_nothing() -> None:
    with pytest.raises(InvalidSignature):
        lark_callback(json.dumps(card_action(APPROVE, token="")), {}, "", now=NOW)


@pytest.mark.parametrize(
    "payload",
    [
        card_action(APPROVE, schema="1.0"),
        card_action(APPROVE, event={}),
        card_action({"decision": "approve"}),
        card_action({"pendingId": "pend_01", "decision": "maybe"}),
        card_action({"pendingId": "pend_01"}),
        card_action({"pendingId": "pend_01", "decision": "approve", "answer": 1}) | {"event": {}},
        card_action({"pendingId": "", "decision": "approve"}),
        card_action({"pendingId": "pend_01", "answer": 3}),
        card_action("not json"),
        card_action(["pend_01"]),
        card_action(None),
    ],
)
def test_an_authenticated_callback_signoff_did_not_build_is_a_bad_form(
    payload: dict[str, Any],
) -> None:
    with pytest.raises(BadForm) as refused:
        lark_callback(json.dumps(payload), {}, TOKEN, now=NOW)

    assert refused.value.field == "event"


def test_an_authenticated_event_of_another_type_is_a_bad_form() -> None:
    payload = card_action(APPROVE)
    payload["header"]["event_type"] = "im.message.receive_v1"

    with pytest.raises(BadForm):
        lark_callback(json.dumps(payload), {}, TOKEN, now=NOW)


def test_an_encrypted_body_without_a_configured_key_is_refused() -> None:
    body = json.dumps({"encrypt": encrypt(json.dumps(card_action(APPROVE)))})

    with pytest.raises(InvalidSignature):
        lark_callback(body, sign(body), TOKEN, now=NOW)


# -- with an Encrypt Key: encrypted bodies and a signature over a timestamp ------------


def test_lark_s_published_decryption_example() -> None:
    # Lark's docs: Encrypt Key "test key", this ciphertext, plaintext "hello world".
    assert decrypt_lark_body("P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=", "test key") == (
        "hello world"
    )


@pytest.mark.parametrize(
    ("encrypted", "key"),
    [
        ("P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=", "other key"),
        ("AAAA", "test key"),
        ("not base64!", "test key"),
        (base64.b64encode(b"x" * 33).decode(), "test key"),
        ("", "test key"),
    ],
)
def test_what_does_not_decrypt_is_an_invalid_signature(encrypted: str, key: str) -> None:
    with pytest.raises(InvalidSignature):
        decrypt_lark_body(encrypted, key)


def test_an_encrypted_challenge_is_answered_without_signature_headers() -> None:
    # Lark encrypts the challenge but does not sign it.
    plain = json.dumps({"challenge": "c-123", "token": TOKEN, "type": "url_verification"})
    body = json.dumps({"encrypt": encrypt(plain)})

    assert lark_callback(body, {}, TOKEN, KEY, now=NOW) == LarkChallenge(challenge="c-123")


def test_an_encrypted_signed_click_is_read() -> None:
    body = json.dumps({"encrypt": encrypt(json.dumps(card_action(APPROVE)))})

    answer = lark_callback(body, sign(body), TOKEN, KEY, now=NOW)

    assert isinstance(answer, LarkAction)
    assert (answer.kind, answer.pending_id) == ("approve", "pend_01")


def test_signature_header_names_are_case_insensitive() -> None:
    body = json.dumps({"encrypt": encrypt(json.dumps(card_action(APPROVE)))})
    headers = {name.lower(): value for name, value in sign(body).items()}

    assert isinstance(lark_callback(body, headers, TOKEN, KEY, now=NOW), LarkAction)


@pytest.mark.parametrize("age", [301, 3600, -301])
def test_a_signed_click_older_or_newer_than_five_minutes_is_refused(age: int) -> None:
    body = json.dumps({"encrypt": encrypt(json.dumps(card_action(APPROVE)))})

    with pytest.raises(InvalidSignature) as refused:
        lark_callback(body, sign(body), TOKEN, KEY, now=NOW + age)

    assert "window" in refused.value.reason


def test_a_click_within_five_minutes_is_accepted() -> None:
    body = json.dumps({"encrypt": encrypt(json.dumps(card_action(APPROVE)))})

    assert isinstance(lark_callback(body, sign(body), TOKEN, KEY, now=NOW + 300), LarkAction)


def _encrypted_click() -> str:
    return json.dumps({"encrypt": encrypt(json.dumps(card_action(APPROVE)))})


@pytest.mark.parametrize(
    "tamper",
    [
        lambda body, headers: (body.replace('"}', '" }'), headers),
        lambda body, headers: (body, {**headers, "X-Lark-Signature": "0" * 64}),
        lambda body, headers: (
            body,
            {**headers, "X-Lark-Signature": headers["X-Lark-Signature"].upper()},
        ),
        lambda body, headers: (body, {**headers, "X-Lark-Request-Nonce": "other"}),
        lambda body, headers: (body, {**headers, "X-Lark-Request-Timestamp": "abc"}),
        lambda body, headers: (body, {**headers, "X-Lark-Request-Timestamp": " 1700000000"}),
        lambda body, headers: (body, {**headers, "X-Lark-Request-Timestamp": "9" * 5000}),
        lambda body, headers: (body, {**headers, "X-Lark-Signature": "é" * 64}),
        lambda body, headers: (body, {k: v for k, v in headers.items() if k != "X-Lark-Signature"}),
        lambda body, headers: (body, {}),
        lambda body, headers: (body, sign(body, key="another-key")),
    ],
    ids=[
        "body",
        "signature",
        "upper-case",
        "nonce",
        "timestamp-text",
        "timestamp-space",
        "timestamp-huge",
        "non-ascii",
        "no-signature",
        "no-headers",
        "other-key",
    ],
)
def test_a_tampered_or_unsigned_click_is_refused(tamper: Any) -> None:
    body = _encrypted_click()
    body, headers = tamper(body, sign(body))

    with pytest.raises(InvalidSignature):
        lark_callback(body, headers, TOKEN, KEY, now=NOW)


def test_a_plain_body_when_a_key_is_configured_is_refused() -> None:
    body = json.dumps(card_action(APPROVE))

    with pytest.raises(InvalidSignature):
        lark_callback(body, sign(body), TOKEN, KEY, now=NOW)


def test_an_encrypted_click_with_the_wrong_token_is_refused() -> None:
    body = json.dumps({"encrypt": encrypt(json.dumps(card_action(APPROVE, token="wrong")))})

    with pytest.raises(InvalidSignature):
        lark_callback(body, sign(body), TOKEN, KEY, now=NOW)


def test_a_body_encrypted_with_another_key_is_refused() -> None:
    body = json.dumps({"encrypt": encrypt(json.dumps(card_action(APPROVE)), key="another-key")})

    with pytest.raises(InvalidSignature):
        lark_callback(body, sign(body), TOKEN, KEY, now=NOW)


# -- garbage ------------------------------------------------------------------------

_json_values = json_values(
    [
        "schema",
        "header",
        "token",
        "event_type",
        "event",
        "operator",
        "open_id",
        "action",
        "value",
        "pendingId",
        "decision",
        "answer",
        "type",
        "challenge",
        "encrypt",
    ],
    max_size=5,
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(
    body=st.one_of(st.text(), st.binary(), _json_values.map(json.dumps)),
    headers=st.dictionaries(
        st.one_of(
            st.sampled_from(
                ["X-Lark-Signature", "X-Lark-Request-Timestamp", "X-Lark-Request-Nonce"]
            ),
            st.text(max_size=10),
        ),
        st.one_of(st.text(max_size=20), st.integers(), st.none()),
        max_size=4,
    ),
    key=st.sampled_from([None, KEY]),
    now=st.floats(allow_nan=True, allow_infinity=True),
)
def test_garbage_only_ever_raises_invalid_signature_or_bad_form(
    body: str | bytes, headers: dict[Any, Any], key: str | None, now: float
) -> None:
    try:
        lark_callback(body, headers, TOKEN, key, now=now)
    except (InvalidSignature, BadForm):
        return


@settings(max_examples=200, deadline=None)
@given(value=_json_values, header=_json_values)
def test_authenticated_garbage_only_ever_raises_bad_form(value: Any, header: Any) -> None:
    # With the right token, whatever else the body holds is at worst a bad form.
    payload = card_action(value)
    if isinstance(header, dict):
        payload["header"] = {**header, "token": TOKEN}
    try:
        answer = lark_callback(json.dumps(payload), {}, TOKEN, now=NOW)
    except BadForm:
        return
    assert isinstance(answer, LarkAction)
