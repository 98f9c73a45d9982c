"""Resume tokens: issue and verify, tampering, expiry, key rotation, hostile input."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from signoff.errors import SecretMissing, TokenExpired, TokenForged, UsageError
from signoff.keys.tokens import ResumeToken, Signer, args_hash, signer_from
from signoff.secrets.memory import MemorySecrets

K1 = b"k1-secret-0123456789abcdef"
K2 = b"k2-secret-fedcba9876543210"
NOW = 1_767_225_600  # 2026-01-01T00:00:00Z
LATER = NOW + 3600
ARGS = {"order": "A-17", "amount": 25}


def signer(current: str = "k1", **keys: bytes) -> Signer:
    return Signer(keys or {"k1": K1}, current)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed_with(key: bytes, key_id: str, payload: Any) -> str:
    """A token over any JSON ``payload``, correctly signed: what a key holder could mint."""
    body = b64(json.dumps(payload).encode())
    signing_input = f"v1.{key_id}.{body}"
    return f"{signing_input}.{b64(hmac.new(key, signing_input.encode(), hashlib.sha256).digest())}"


def test_an_issued_token_verifies_to_what_was_issued() -> None:
    token = signer().issue("p1", "decide", "acme", ARGS, LATER)

    granted = signer().verify(token, NOW)

    assert granted == ResumeToken(
        pending_id="p1",
        action="decide",
        tenant="acme",
        args_hash=args_hash(ARGS),
        expires_at=LATER,
        key_id="k1",
    )


def test_the_token_has_the_documented_format() -> None:
    token = signer().issue("p1", "answer", "acme", None, LATER)

    version, key_id, payload, signature = token.split(".")

    assert (version, key_id) == ("v1", "k1")
    assert "=" not in token
    assert json.loads(base64.urlsafe_b64decode(payload + "==")) == {
        "a": "answer",
        "e": LATER,
        "h": args_hash(None),
        "p": "p1",
        "t": "acme",
    }
    expected = hmac.new(K1, f"v1.k1.{payload}".encode(), hashlib.sha256).digest()
    assert signature == b64(expected)


def test_a_link_made_for_one_recipient_names_them_and_its_channel() -> None:
    token = signer().issue(
        "p1", "decide", "acme", ARGS, LATER, recipient="ana@example.com", channel="ops-mail"
    )

    granted = signer().verify(token, NOW)
    payload = json.loads(base64.urlsafe_b64decode(token.split(".")[2] + "=="))

    assert (granted.recipient, granted.channel) == ("ana@example.com", "ops-mail")
    assert (payload["r"], payload["c"]) == ("ana@example.com", "ops-mail")
    # a token without them (every token issued before recipients existed) names nobody
    plain = signer().verify(signer().issue("p1", "decide", "acme", ARGS, LATER), NOW)
    assert (plain.recipient, plain.channel) == (None, None)


def test_a_recipient_comes_with_its_channel_or_not_at_all() -> None:
    with pytest.raises(UsageError):
        signer().issue("p1", "decide", "acme", ARGS, LATER, recipient="ana@example.com")
    base = {"a": "decide", "e": LATER, "h": args_hash(ARGS), "p": "p1", "t": "acme"}
    for extra in ({"r": "ana@example.com"}, {"c": "ops-mail"}, {"r": None, "c": "ops-mail"}):
        with pytest.raises(TokenForged):
            signer().verify(signed_with(K1, "k1", base | extra), NOW)


def test_a_fractional_expiry_is_cut_so_the_token_never_outlives_its_item() -> None:
    token = signer().issue("p1", "decide", "acme", ARGS, LATER + 0.9)

    assert signer().verify(token, NOW).expires_at == LATER


@pytest.mark.parametrize("part", [0, 1, 2, 3], ids=["version", "key_id", "payload", "signature"])
@pytest.mark.parametrize("position", [0, -1], ids=["first", "last"])
def test_changing_any_character_of_any_part_makes_the_token_forged(
    part: int, position: int
) -> None:
    both = signer("k1", k1=K1, k2=K2)
    parts = both.issue("p1", "decide", "acme", ARGS, LATER).split(".")
    original = parts[part][position]
    # a different character of the base64url alphabet (the key id "k1" becomes "k2" etc.)
    replacement = "2" if original != "2" else "3"
    chars = list(parts[part])
    chars[position] = replacement
    parts[part] = "".join(chars)

    with pytest.raises(TokenForged):
        both.verify(".".join(parts), NOW)


def test_a_token_moved_to_another_listed_key_is_forged() -> None:
    both = signer("k1", k1=K1, k2=K2)
    _, _, payload, signature = both.issue("p1", "decide", "acme", ARGS, LATER).split(".")

    with pytest.raises(TokenForged):
        both.verify(f"v1.k2.{payload}.{signature}", NOW)


def test_a_token_with_a_changed_grant_but_the_old_signature_is_forged() -> None:
    token = signer().issue("p1", "view", "acme", ARGS, LATER)
    _, _, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["a"] = "approve"

    with pytest.raises(TokenForged):
        signer().verify(f"v1.k1.{b64(json.dumps(claims).encode())}.{signature}", NOW)


def test_a_token_signed_with_another_key_is_forged() -> None:
    stranger = Signer({"k1": b"someone-else-entirely-0000"}, "k1")
    token = stranger.issue("p1", "approve", "acme", ARGS, LATER)

    with pytest.raises(TokenForged):
        signer().verify(token, NOW)


def test_a_token_is_expired_at_its_expiry_and_after_but_not_before() -> None:
    token = signer().issue("p1", "decide", "acme", ARGS, LATER)

    assert signer().verify(token, LATER - 1).pending_id == "p1"
    for now in (LATER, LATER + 86_400):
        with pytest.raises(TokenExpired) as caught:
            signer().verify(token, now)
        assert caught.value.expired_at == LATER
        assert caught.value.pending_id == "p1"


def test_a_forged_token_is_forged_even_when_also_expired() -> None:
    token = signer().issue("p1", "decide", "acme", ARGS, LATER)

    forged = token.rsplit(".", 1)[0] + "." + b64(bytes(32))

    with pytest.raises(TokenForged):
        signer().verify(forged, LATER + 1)


def test_during_a_rotation_tokens_of_the_old_key_verify_until_it_is_removed() -> None:
    # Given a token issued before the rotation, under k1
    before = signer("k1", k1=K1)
    old_token = before.issue("p1", "decide", "acme", ARGS, LATER)

    # When k2 becomes current while k1 is still listed
    rotating = signer("k2", k1=K1, k2=K2)
    new_token = rotating.issue("p2", "decide", "acme", ARGS, LATER)

    # Then both verify, each naming its key
    assert rotating.verify(old_token, NOW).key_id == "k1"
    assert rotating.verify(new_token, NOW).key_id == "k2"
    assert new_token.split(".")[1] == "k2"

    # And once k1 is removed, its tokens are forged
    rotated = signer("k2", k2=K2)
    assert rotated.verify(new_token, NOW).pending_id == "p2"
    with pytest.raises(TokenForged):
        rotated.verify(old_token, NOW)


def test_a_token_naming_an_unknown_key_is_forged() -> None:
    token = signer("k1", k1=K1).issue("p1", "decide", "acme", ARGS, LATER)
    renamed = token.replace("v1.k1.", "v1.k9.", 1)

    with pytest.raises(TokenForged):
        signer("k1", k1=K1).verify(renamed, NOW)


def test_forged_says_nothing_about_which_check_failed() -> None:
    token = signer().issue("p1", "decide", "acme", ARGS, LATER)
    attempts = ["", "v2" + token[2:], token.replace("k1", "k9", 1), token[:-1] + "x", "a.b.c.d"]

    messages = set()
    for attempt in attempts:
        with pytest.raises(TokenForged) as caught:
            signer().verify(attempt, NOW)
        messages.add(str(caught.value))

    assert messages == {"the resume token is not valid"}


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        ".",
        "...",
        "v1...",
        "v1.k1..",
        "v1.k1.e30.",
        "v1.k1.!!!.AAAA",
        "v1.k1.e30.AAAA.extra",
        "not a token at all",
        "v1.k1." + "A" * 5000 + ".AAAA",
        "v1.k1.\u00e9\u00e9.\u00e9",
        "v1.k1.\ud800.\ud800",
    ],
)
def test_garbage_is_forged(garbage: str) -> None:
    with pytest.raises(TokenForged):
        signer().verify(garbage, NOW)


def test_a_value_that_is_not_text_is_forged() -> None:
    with pytest.raises(TokenForged):
        signer().verify(b"v1.k1.e30.AAAA", NOW)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "payload",
    [
        [],
        "text",
        None,
        {},
        {"a": "decide", "e": LATER, "h": args_hash(ARGS), "p": "p1"},
        {"a": "decide", "e": LATER, "h": args_hash(ARGS), "p": "p1", "t": "acme", "x": 1},
        {"a": "delete", "e": LATER, "h": args_hash(ARGS), "p": "p1", "t": "acme"},
        {"a": "decide", "e": "tomorrow", "h": args_hash(ARGS), "p": "p1", "t": "acme"},
        {"a": "decide", "e": float(LATER), "h": args_hash(ARGS), "p": "p1", "t": "acme"},
        {"a": "decide", "e": True, "h": args_hash(ARGS), "p": "p1", "t": "acme"},
        {"a": "decide", "e": LATER, "h": "abc", "p": "p1", "t": "acme"},
        {"a": "decide", "e": LATER, "h": args_hash(ARGS), "p": 1, "t": "acme"},
        {"a": "decide", "e": LATER, "h": args_hash(ARGS), "p": "p1", "t": ["acme"]},
    ],
)
def test_a_correctly_signed_payload_of_the_wrong_shape_is_forged(payload: Any) -> None:
    with pytest.raises(TokenForged):
        signer().verify(signed_with(K1, "k1", payload), NOW)


def test_a_correctly_signed_payload_that_is_not_json_is_forged() -> None:
    body = b64(b"\xff\xfe not json")
    signing_input = f"v1.k1.{body}"
    mac = b64(hmac.new(K1, signing_input.encode(), hashlib.sha256).digest())

    with pytest.raises(TokenForged):
        signer().verify(f"{signing_input}.{mac}", NOW)


@settings(max_examples=300)
@given(st.text())
def test_arbitrary_text_only_ever_raises_forged(text: str) -> None:
    with pytest.raises(TokenForged):
        signer().verify(text, NOW)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)
_claims = st.fixed_dictionaries(
    {
        "a": st.sampled_from(["decide", "approve", "deny", "answer", "view"]) | _json,
        "e": st.integers() | _json,
        "h": st.just(args_hash(ARGS)) | _json,
        "p": st.text() | _json,
        "t": st.text() | _json,
    }
)


@settings(max_examples=300)
@given(st.one_of(_json, _claims))
def test_any_signed_payload_verifies_or_raises_only_token_errors(payload: Any) -> None:
    try:
        granted = signer().verify(signed_with(K1, "k1", payload), NOW)
    except (TokenForged, TokenExpired):
        return
    # whatever got through is a well-typed grant of a live token
    assert isinstance(granted.pending_id, str)
    assert isinstance(granted.tenant, str)
    assert type(granted.expires_at) is int
    assert granted.expires_at > NOW
    assert granted.action in {"decide", "approve", "deny", "answer", "view"}


def test_the_args_hash_ignores_key_order_and_spacing() -> None:
    assert args_hash({"b": 1, "a": [1, 2]}) == args_hash({"a": [1, 2], "b": 1})
    assert args_hash({"a": 1}) == hashlib.sha256(b'{"a":1}').hexdigest()
    assert args_hash(None) == hashlib.sha256(b"null").hexdigest()


def test_the_args_hash_changes_with_any_value() -> None:
    hashes = {
        args_hash(args)
        for args in (ARGS, {**ARGS, "amount": 26}, {**ARGS, "amount": 25.0}, {}, None)
    }

    assert len(hashes) == 5


def test_the_args_hash_is_stable_across_releases() -> None:
    # pinned: a change here breaks every token already sent out
    assert args_hash({"order": "A-17", "amount": 25, "note": "café"}) == (
        hashlib.sha256(b'{"amount":25,"note":"caf\\u00e9","order":"A-17"}').hexdigest()
    )


def test_the_token_binds_the_args_it_was_issued_for() -> None:
    token = signer().issue("p1", "decide", "acme", ARGS, LATER)

    granted = signer().verify(token, NOW)

    assert granted.args_hash == args_hash(dict(reversed(list(ARGS.items()))))
    assert granted.args_hash != args_hash({**ARGS, "amount": 2500})


@pytest.mark.parametrize(
    ("action", "permitted"),
    [
        ("decide", {"approve", "deny"}),
        ("approve", {"approve"}),
        ("deny", {"deny"}),
        ("answer", {"answer"}),
        ("view", set()),
    ],
)
def test_each_action_permits_its_decisions_only(action: Any, permitted: set[str]) -> None:
    granted = signer().verify(signer().issue("p1", action, "acme", ARGS, LATER), NOW)

    allowed = {d for d in ("approve", "deny", "answer") if granted.permits(d)}

    assert allowed == permitted


def test_an_unknown_action_is_not_issued() -> None:
    with pytest.raises(UsageError):
        signer().issue("p1", "delete", "acme", ARGS, LATER)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keys", "current"),
    [
        ({}, "k1"),
        ({"k1": K1}, "k2"),
        ({"k1": b"tiny-k3y"}, "k1"),
        ({"k.1": K1}, "k.1"),
        ({"": K1}, ""),
    ],
    ids=["no-keys", "current-missing", "short-key", "dot-in-id", "empty-id"],
)
def test_a_signer_refuses_unusable_keys(keys: dict[str, bytes], current: str) -> None:
    with pytest.raises(UsageError) as caught:
        Signer(keys, current)

    assert "tiny-k3y" not in str(caught.value)


def test_signer_from_a_plain_secret_uses_key_id_k1() -> None:
    secrets = MemorySecrets({"resume-signing": K1.decode()})

    built = signer_from(secrets)

    assert built.current == "k1"
    assert signer().verify(built.issue("p1", "decide", "acme", ARGS, LATER), NOW).key_id == "k1"


def test_signer_from_a_json_key_set_signs_with_current_and_verifies_with_all() -> None:
    value = json.dumps({"current": "k2", "keys": {"k1": K1.decode(), "k2": K2.decode()}})
    secrets = MemorySecrets({"resume-signing": value})
    old_token = signer().issue("p1", "decide", "acme", ARGS, LATER)

    built = signer_from(secrets)

    assert built.current == "k2"
    assert built.key_ids == {"k1", "k2"}
    assert built.verify(old_token, NOW).key_id == "k1"


@pytest.mark.parametrize(
    "value",
    [
        "{not json",
        json.dumps({"keys": {"k1": K1.decode()}}),
        json.dumps({"current": "k1", "keys": ["k1"]}),
        json.dumps({"current": "k1", "keys": {"k1": 12345}}),
        json.dumps({"current": "k2", "keys": {"k1": K1.decode()}}),
        json.dumps({"current": "k1", "keys": {"k1": "tiny-k3y"}}),
        "tiny-k3y",
    ],
)
def test_signer_from_an_unusable_secret_raises_missing_without_the_value(value: str) -> None:
    secrets = MemorySecrets({"resume-signing": value})

    with pytest.raises(SecretMissing) as caught:
        signer_from(secrets)

    assert caught.value.name == "resume-signing"
    assert K1.decode() not in str(caught.value)
    assert "tiny-k3y" not in str(caught.value)


def test_signer_from_an_absent_secret_raises_missing() -> None:
    with pytest.raises(SecretMissing):
        signer_from(MemorySecrets({}))
