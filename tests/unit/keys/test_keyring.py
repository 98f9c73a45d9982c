"""RotatingSigner: a warm signer follows its key set's rotation, boundedly."""

from __future__ import annotations

import json

import pytest

from signoff.clock import ManualClock
from signoff.errors import StoreUnavailable, TokenForged
from signoff.keys.keyring import KEYS_MAX_AGE, KEYS_MIN_REFRESH, rotating_signer
from signoff.keys.tokens import Signer
from signoff.secrets.memory import MemorySecrets

K1 = "k1-0123456789abcdef-ffff"
K2 = "k2-fedcba9876543210-eeee"
NOW = 1_767_225_600


class CountingSecrets(MemorySecrets):
    """Memory secrets that count reads, and fail them while ``failing`` is set."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.reads = 0
        self.failing = False

    def get(self, name: str, *, fresh: bool = False) -> str:
        self.reads += 1
        if self.failing:
            raise StoreUnavailable("throttled")
        return super().get(name, fresh=fresh)


def key_set(current: str, **keys: str) -> str:
    return json.dumps({"current": current, "keys": keys})


def token(key_id: str, key: str, pending_id: str = "p1") -> str:
    return Signer({key_id: key.encode()}, key_id).issue(
        pending_id, "decide", "acme", None, NOW + 60
    )


@pytest.fixture
def secrets() -> CountingSecrets:
    return CountingSecrets({"resume-signing": key_set("k1", k1=K1)})


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def test_a_token_of_a_key_added_by_a_rotation_verifies_at_once(
    secrets: CountingSecrets, clock: ManualClock
) -> None:
    signer = rotating_signer(secrets, clock)
    old = signer.issue("p1", "decide", "acme", None, NOW + 60)

    secrets.set("resume-signing", key_set("k2", k1=K1, k2=K2))

    assert signer.verify(token("k2", K2), NOW).key_id == "k2"
    assert signer.verify(old, NOW).key_id == "k1"
    assert signer.issue("p2", "decide", "acme", None, NOW + 60).startswith("v1.k2.")


def test_a_dropped_key_verifies_until_max_age_then_is_forged(
    secrets: CountingSecrets, clock: ManualClock
) -> None:
    signer = rotating_signer(secrets, clock)
    old = token("k1", K1)
    secrets.set("resume-signing", key_set("k2", k2=K2))

    clock.advance(KEYS_MAX_AGE - 1)
    assert signer.verify(old, NOW).key_id == "k1"
    clock.advance(1)

    with pytest.raises(TokenForged):
        signer.verify(old, NOW)
    assert signer.verify(token("k2", K2), NOW).key_id == "k2"


def test_made_up_key_ids_cost_one_read_per_interval(
    secrets: CountingSecrets, clock: ManualClock
) -> None:
    signer = rotating_signer(secrets, clock)
    assert secrets.reads == 1

    for n in range(500):
        with pytest.raises(TokenForged):
            signer.verify(token(f"x{n}", K2), NOW)
    assert secrets.reads == 2, "one read for the first unknown id, none for the rest"

    clock.advance(KEYS_MIN_REFRESH)
    for n in range(500):
        with pytest.raises(TokenForged):
            signer.verify(token(f"y{n}", K2), NOW)
    assert secrets.reads == 3


def test_a_malformed_key_id_causes_no_read(secrets: CountingSecrets, clock: ManualClock) -> None:
    signer = rotating_signer(secrets, clock)
    genuine = token("k1", K1)

    with pytest.raises(TokenForged):
        signer.verify(genuine.replace("v1.k1.", "v1.k!1.", 1), NOW)

    assert secrets.reads == 1


def test_a_failing_read_keeps_the_keys_held_and_is_not_retried_at_once(
    secrets: CountingSecrets, clock: ManualClock
) -> None:
    signer = rotating_signer(secrets, clock)
    old = token("k1", K1)
    secrets.failing = True
    clock.advance(KEYS_MAX_AGE)

    assert signer.verify(old, NOW).key_id == "k1"
    assert signer.verify(old, NOW).key_id == "k1"
    assert secrets.reads == 2, "one failed read, then the held keys until max_age"

    secrets.failing = False
    secrets.set("resume-signing", key_set("k2", k2=K2))
    clock.advance(KEYS_MAX_AGE)
    with pytest.raises(TokenForged):
        signer.verify(old, NOW)


def test_a_mistyped_new_value_keeps_the_keys_held(
    secrets: CountingSecrets, clock: ManualClock
) -> None:
    signer = rotating_signer(secrets, clock)
    secrets.set("resume-signing", '{"current": "k2", "keys": {"k2": "short"}}')
    clock.advance(KEYS_MAX_AGE)

    assert signer.verify(token("k1", K1), NOW).key_id == "k1"
    assert signer.current == "k1"
