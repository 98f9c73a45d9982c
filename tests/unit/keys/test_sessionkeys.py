"""Session ids from a sessionKey: one per (tenant, agent, key, value), keyed, valid everywhere."""

from __future__ import annotations

import re

import pytest

from signoff.api.models import MessageBody
from signoff.errors import SecretMissing
from signoff.keys.sessions import SESSION_KEY_SECRET, SessionKeys, session_keys_from
from signoff.secrets.memory import MemorySecrets

SECRET = b"session-key-0123456789abcdef"
KEYS = SessionKeys(SECRET)


def derive(
    tenant: str = "t", agent: str = "a", key: str = "customerId", value: object = "v"
) -> str:
    return KEYS.session_id(tenant=tenant, agent=agent, key=key, value=value)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ({"value": "张三"}, {"value": "李四"}),
        ({"value": "é"}, {"value": "e\u0301"}),  # no normalisation either
        ({"value": "a b"}, {"value": "a_b"}),
        ({"tenant": "acme"}, {"tenant": "globex"}),
        ({"agent": "support"}, {"agent": "billing"}),
        ({"key": "customerId"}, {"key": "customer_id"}),
        # the parts cannot run into each other
        ({"tenant": "a", "agent": "b-c"}, {"tenant": "a-b", "agent": "c"}),
        ({"tenant": 'a","b'}, {"tenant": "a", "agent": 'b","a'}),
    ],
)
def test_any_difference_in_the_parts_is_another_session(
    one: dict[str, str], other: dict[str, str]
) -> None:
    assert derive(**one) != derive(**other)


def test_the_same_parts_are_the_same_session_and_a_number_counts_as_its_text() -> None:
    assert derive(value="张三") == derive(value="张三")
    assert derive(value=42) == derive(value="42")


def test_the_id_depends_on_the_secret() -> None:
    other = SessionKeys(b"another-secret-0123456789")
    assert other.session_id(tenant="t", agent="a", key="customerId", value="v") != derive()


def test_the_id_is_the_key_name_and_40_hex_digits_and_a_valid_session_id() -> None:
    made = derive(key="customer id/ü" * 10, value="x" * 10_000)

    assert re.fullmatch(r"[A-Za-z0-9_.:-]{1,40}-[0-9a-f]{40}", made)
    assert MessageBody.model_validate({"message": "hi", "sessionId": made}).session_id == made


def test_the_secret_comes_from_the_source_and_must_be_long_enough() -> None:
    source = MemorySecrets({SESSION_KEY_SECRET: SECRET.decode()})
    assert (
        session_keys_from(source).session_id(tenant="t", agent="a", key="customerId", value="v")
        == derive()
    )

    with pytest.raises(SecretMissing):
        session_keys_from(MemorySecrets({SESSION_KEY_SECRET: "short"}))
    with pytest.raises(SecretMissing):
        session_keys_from(MemorySecrets({}))
