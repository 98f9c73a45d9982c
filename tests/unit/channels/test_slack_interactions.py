"""Verifying Slack's request signature and reading the button a person clicked."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from signoff.channels.slack.interactions import (
    SlackAction,
    parse_slack_action,
    verify_slack_request,
)
from signoff.errors import BadForm, InvalidSignature
from tests.support.chat import json_values

# Slack's published example ("Verifying requests from Slack"): the signing secret,
# timestamp and slash-command body from the docs, and the signature they print.
VECTOR_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
VECTOR_TIMESTAMP = "1531420618"
VECTOR_BODY = (
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow"
    "&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner"
    "&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands"
    "%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
    "&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
)
VECTOR_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
VECTOR_NOW = float(VECTOR_TIMESTAMP) + 30


def vector_headers(**changes: str) -> dict[str, str]:
    headers = {
        "X-Slack-Request-Timestamp": VECTOR_TIMESTAMP,
        "X-Slack-Signature": VECTOR_SIGNATURE,
    }
    headers.update(changes)
    return headers


def signed(body: str, secret: str, timestamp: int) -> dict[str, str]:
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256)
    return {
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": f"v0={digest.hexdigest()}",
    }


def block_actions(action_id: str, value: str | None, **overrides: Any) -> dict[str, Any]:
    """A ``block_actions`` payload shaped like the ones Slack posts for a button click."""
    action: dict[str, Any] = {
        "action_id": action_id,
        "block_id": "signoff",
        "text": {"type": "plain_text", "text": "Approve"},
        "type": "button",
        "action_ts": "1700000001.000200",
    }
    if value is not None:
        action["value"] = value
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": "U123ABC", "username": "alice", "name": "alice", "team_id": "T1"},
        "api_app_id": "A1",
        "token": "legacy-verification-token",
        "container": {
            "type": "message",
            "message_ts": "1700000000.000100",
            "channel_id": "C0123ABCD",
            "is_ephemeral": False,
        },
        "trigger_id": "123.456.abc",
        "team": {"id": "T1", "domain": "acme"},
        "channel": {"id": "C0123ABCD", "name": "approvals"},
        "message": {"type": "message", "ts": "1700000000.000100", "text": "Approve?"},
        "response_url": "https://hooks.slack.com/actions/T1/1/xyz",
        "actions": [action],
    }
    payload.update(overrides)
    return payload


def form(payload: Any) -> str:
    return urlencode({"payload": json.dumps(payload)})


# -- verification ---------------------------------------------------------------


def test_slacks_published_example_verifies() -> None:
    verify_slack_request(vector_headers(), VECTOR_BODY, VECTOR_SECRET, VECTOR_NOW)


def test_header_names_are_case_insensitive() -> None:
    headers = {key.lower(): value for key, value in vector_headers().items()}

    verify_slack_request(headers, VECTOR_BODY, VECTOR_SECRET, VECTOR_NOW)


@pytest.mark.parametrize(
    ("headers", "body", "secret"),
    [
        (vector_headers(), VECTOR_BODY + "&extra=1", VECTOR_SECRET),
        (vector_headers(), VECTOR_BODY, "another-secret"),
        (vector_headers(**{"X-Slack-Signature": "v0=" + "0" * 64}), VECTOR_BODY, VECTOR_SECRET),
        (
            vector_headers(**{"X-Slack-Signature": VECTOR_SIGNATURE.upper()}),
            VECTOR_BODY,
            VECTOR_SECRET,
        ),
        (vector_headers(**{"X-Slack-Signature": VECTOR_SIGNATURE[3:]}), VECTOR_BODY, VECTOR_SECRET),
        (
            vector_headers(**{"X-Slack-Signature": "v1" + VECTOR_SIGNATURE[2:]}),
            VECTOR_BODY,
            VECTOR_SECRET,
        ),
        (vector_headers(), VECTOR_BODY, ""),
    ],
    ids=[
        "tampered-body",
        "wrong-secret",
        "wrong-hex",
        "upper-case",
        "no-version",
        "v1",
        "no-secret",
    ],
)
def test_a_bad_signature_is_refused(headers: dict[str, str], body: str, secret: str) -> None:
    with pytest.raises(InvalidSignature) as refused:
        verify_slack_request(headers, body, secret, VECTOR_NOW)

    assert refused.value.source == "slack"
    assert str(refused.value) == "the slack request could not be verified"


@pytest.mark.parametrize("offset", [-300, 0, 300])
def test_a_timestamp_within_five_minutes_is_accepted(offset: int) -> None:
    verify_slack_request(
        vector_headers(), VECTOR_BODY, VECTOR_SECRET, float(VECTOR_TIMESTAMP) + offset
    )


@pytest.mark.parametrize("offset", [301, 3600, -301])
def test_a_timestamp_older_or_newer_than_five_minutes_is_refused(offset: int) -> None:
    # A replayed (or clock-shifted) request is refused even with a valid signature.
    with pytest.raises(InvalidSignature) as refused:
        verify_slack_request(
            vector_headers(), VECTOR_BODY, VECTOR_SECRET, float(VECTOR_TIMESTAMP) + offset
        )

    assert "window" in refused.value.reason


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-Slack-Signature": VECTOR_SIGNATURE},
        {"X-Slack-Request-Timestamp": VECTOR_TIMESTAMP},
        vector_headers(**{"X-Slack-Request-Timestamp": "not-a-number"}),
        vector_headers(**{"X-Slack-Request-Timestamp": ""}),
        vector_headers(**{"X-Slack-Request-Timestamp": " 1531420618"}),
        vector_headers(**{"X-Slack-Request-Timestamp": "+1531420618"}),
        vector_headers(**{"X-Slack-Request-Timestamp": "1531420618.0"}),
        vector_headers(**{"X-Slack-Request-Timestamp": "1_531_420_618"}),
        vector_headers(**{"X-Slack-Request-Timestamp": "١٥٣١٤٢٠٦١٨"}),  # Arabic-Indic digits
        vector_headers(**{"X-Slack-Request-Timestamp": "9" * 5000}),
        vector_headers(**{"X-Slack-Signature": "v0=é" + "0" * 63}),
        vector_headers(**{"X-Slack-Signature": ""}),
        {"X-Slack-Request-Timestamp": None, "X-Slack-Signature": None},
        {"X-Slack-Request-Timestamp": 1531420618, "X-Slack-Signature": VECTOR_SIGNATURE},
    ],
)
def test_malformed_headers_are_refused_as_invalid_signatures(headers: dict[str, Any]) -> None:
    with pytest.raises(InvalidSignature):
        verify_slack_request(headers, VECTOR_BODY, VECTOR_SECRET, VECTOR_NOW)


def test_a_body_that_cannot_be_encoded_is_an_invalid_signature() -> None:
    with pytest.raises(InvalidSignature):
        verify_slack_request(vector_headers(), "payload=\ud800", VECTOR_SECRET, VECTOR_NOW)


def test_headers_that_are_not_a_mapping_are_an_invalid_signature() -> None:
    with pytest.raises(InvalidSignature):
        verify_slack_request(None, VECTOR_BODY, VECTOR_SECRET, VECTOR_NOW)  # type: ignore[arg-type]


_header_values = st.one_of(
    st.text(),
    st.integers(),
    st.none(),
    st.binary(),
    st.from_regex(r"v0=[0-9a-f]{64}", fullmatch=True),
    st.integers(min_value=1531420000, max_value=1531421000).map(str),
)


@settings(max_examples=300, deadline=None)
@given(
    headers=st.dictionaries(
        st.one_of(
            st.sampled_from(
                ["X-Slack-Request-Timestamp", "x-slack-signature", "X-SLACK-SIGNATURE"]
            ),
            st.text(max_size=20),
        ),
        _header_values,
        max_size=4,
    ),
    body=st.text(max_size=200),
    now=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(VECTOR_NOW)),
)
def test_garbage_never_raises_anything_but_invalid_signature(
    headers: dict[Any, Any], body: str, now: float
) -> None:
    with pytest.raises(InvalidSignature):
        verify_slack_request(headers, body, VECTOR_SECRET, now)


def test_a_click_signed_with_the_app_secret_verifies_then_parses() -> None:
    # given a click body signed the way Slack signs it
    body = form(block_actions("signoff_approve", "pend_01"))
    headers = signed(body, "app-signing-secret", 1_700_000_000)

    # when it is verified and read
    verify_slack_request(headers, body, "app-signing-secret", 1_700_000_010.0)
    action = parse_slack_action(body)

    # then it is the approval of pend_01 by U123ABC, on that message
    assert action == SlackAction(
        kind="approve",
        user_id="U123ABC",
        action_id="signoff_approve",
        pending_id="pend_01",
        user_name="alice",
        team_id="T1",
        channel_id="C0123ABCD",
        message_ts="1700000000.000100",
        response_url="https://hooks.slack.com/actions/T1/1/xyz",
    )
    assert action.decision == "approve"


# -- parsing ----------------------------------------------------------------------


def test_deny_is_read() -> None:
    action = parse_slack_action(form(block_actions("signoff_deny", "pend_01")))

    assert action.kind == "deny"
    assert action.decision == "deny"
    assert action.pending_id == "pend_01"


def test_an_option_answer_is_read_from_the_button_value() -> None:
    value = json.dumps({"pendingId": "pend_02", "answer": "Savings"})

    action = parse_slack_action(form(block_actions("signoff_answer:1", value)))

    assert action.kind == "answer"
    assert action.pending_id == "pend_02"
    assert action.answer == "Savings"
    assert action.decision is None


def test_the_link_button_click_is_read_as_opening_the_page() -> None:
    action = parse_slack_action(form(block_actions("signoff_open", "pend_02")))

    assert action.kind == "open"
    assert action.decision is None
    assert action.answer is None


def test_channel_and_ts_fall_back_to_the_container_and_message() -> None:
    payload = block_actions("signoff_approve", "pend_01")
    del payload["channel"]
    payload["container"] = {"type": "message"}

    action = parse_slack_action(form(payload))

    assert action.channel_id is None
    assert action.message_ts == "1700000000.000100"


@pytest.mark.parametrize(
    "body",
    [
        "",
        "payload=",
        "payload=not-json",
        "other=1",
        form({"type": "block_actions"}) + "&" + form({"type": "block_actions"}),
        form([1, 2]),
        form(block_actions("signoff_approve", "pend_01", type="view_submission")),
        form(block_actions("signoff_approve", "pend_01", actions=[])),
        form(block_actions("signoff_approve", "pend_01", actions=["x"])),
        form(block_actions("signoff_approve", "pend_01", user={})),
        form(block_actions("signoff_approve", "pend_01", user="U1")),
        form(block_actions("signoff_approve", None)),
        form(block_actions("signoff_approve", "")),
        form(block_actions("someone_elses_button", "pend_01")),
        form(block_actions("signoff_answer:x", '{"pendingId": "p", "answer": "a"}')),
        form(block_actions("signoff_answer:1", "pend_02")),
        form(block_actions("signoff_answer:1", '["pend_02"]')),
        form(block_actions("signoff_answer:1", '{"pendingId": "pend_02"}')),
        form(block_actions("signoff_answer:1", '{"pendingId": "", "answer": "a"}')),
        form(block_actions("signoff_answer:1", '{"pendingId": 1, "answer": "a"}')),
    ],
)
def test_malformed_payloads_are_bad_forms(body: str) -> None:
    with pytest.raises(BadForm) as refused:
        parse_slack_action(body)

    assert refused.value.field == "payload"


@settings(max_examples=300, deadline=None)
@given(
    body=st.one_of(
        st.text(),
        json_values(
            ["type", "user", "id", "actions", "action_id", "value", "container", "channel"],
            max_size=4,
            max_leaves=12,
        ).map(form),
    )
)
def test_garbage_payloads_only_ever_raise_bad_form(body: str) -> None:
    try:
        action = parse_slack_action(body)
    except BadForm:
        return
    assert isinstance(action, SlackAction)
