"""Inbox tokens (``Signer.issue_inbox`` / ``verify_inbox``): one approver of one tenant,
expiring, and never usable as a resume (decision) token, nor a resume token as one."""

from __future__ import annotations

import base64
import json

import pytest

from signoff.errors import TokenExpired, TokenForged, UsageError
from signoff.keys.tokens import Signer

KEY = b"k" * 32
NOW = 1_800_000_000.0


def signer() -> Signer:
    return Signer({"k1": KEY}, "k1")


def test_an_inbox_token_names_its_tenant_approver_and_expiry() -> None:
    token = signer().issue_inbox("acme", "alice@example.com", NOW + 3600)

    grant = signer().verify_inbox(token, NOW)

    assert (grant.tenant, grant.approver, grant.expires_at, grant.key_id) == (
        "acme",
        "alice@example.com",
        int(NOW + 3600),
        "k1",
    )


def test_an_inbox_token_is_refused_as_a_decision_token() -> None:
    token = signer().issue_inbox("acme", "alice@example.com", NOW + 3600)

    with pytest.raises(TokenForged):
        signer().verify(token, NOW)


@pytest.mark.parametrize("action", ["decide", "approve", "deny", "answer", "view"])
def test_a_decision_token_is_refused_as_an_inbox_token(action: str) -> None:
    token = signer().issue("p1", action, "acme", {"amount": 5}, NOW + 3600)  # type: ignore[arg-type]

    with pytest.raises(TokenForged):
        signer().verify_inbox(token, NOW)


def test_a_decision_payload_signed_as_an_inbox_token_is_still_refused() -> None:
    # the version tag alone is not the guard: a resume payload under "i1" has the wrong keys
    resume = {"a": "decide", "e": int(NOW + 60), "h": "0" * 64, "p": "p1", "t": "acme"}
    forged = signer()._sign("i1", resume)

    with pytest.raises(TokenForged):
        signer().verify_inbox(forged, NOW)


def test_an_expired_inbox_token_is_refused_as_expired() -> None:
    token = signer().issue_inbox("acme", "alice@example.com", NOW)

    with pytest.raises(TokenExpired):
        signer().verify_inbox(token, NOW)


def test_a_tampered_or_foreign_inbox_token_is_forged() -> None:
    token = signer().issue_inbox("acme", "alice@example.com", NOW + 3600)
    version, key_id, payload, signature = token.split(".")
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data["t"] = "globex"
    other = base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    with pytest.raises(TokenForged):
        signer().verify_inbox(f"{version}.{key_id}.{other}.{signature}", NOW)
    with pytest.raises(TokenForged):
        Signer({"k1": b"x" * 32}, "k1").verify_inbox(token, NOW)


def test_an_inbox_token_needs_a_tenant_and_an_approver() -> None:
    with pytest.raises(UsageError):
        signer().issue_inbox("", "alice", NOW + 60)
    with pytest.raises(UsageError):
        signer().issue_inbox("acme", "", NOW + 60)
