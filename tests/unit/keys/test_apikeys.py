"""API keys: the clear key's format, its hash, and which tenant a request's key belongs to."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from pydantic import ValidationError

from signoff.errors import Unauthorized, UsageError
from signoff.keys.api_keys import ANONYMOUS_TENANT, hash_key, new_api_key, tenant_for
from signoff.store.memory import MemoryStore
from signoff.store.records import ApiKey

CLEAR_KEY = re.compile(r"^sok_(sk_[a-z0-9]{8})_([A-Za-z0-9_-]{32})$")


class LooseKeys:
    """An ApiKeys adapter whose lookup matches any hash: it always finds ``key``."""

    def __init__(self, key: ApiKey) -> None:
        self.key = key

    def add(self, key: ApiKey) -> None:
        raise AssertionError("not used")

    def find(self, key_hash: str) -> ApiKey | None:
        return self.key

    def revoke(self, key_id: str, *, at: float) -> ApiKey:
        raise AssertionError("not used")

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        return [self.key]


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


def issue(store: MemoryStore, tenant: str = "acme") -> tuple[str, ApiKey]:
    clear, key = new_api_key(tenant, "ci", 1000.0)
    store.api_keys.add(key)
    return clear, key


# --- minting -------------------------------------------------------------------------------


def test_a_new_key_has_the_documented_format_and_its_id_inside() -> None:
    clear, key = new_api_key("acme", "deploy bot", 1000.0)

    match = CLEAR_KEY.match(clear)
    assert match is not None, clear
    assert match.group(1) == key.key_id
    assert (key.tenant, key.label, key.created_at, key.revoked_at) == (
        "acme",
        "deploy bot",
        1000.0,
        None,
    )


def test_the_record_keeps_the_sha256_of_the_clear_key_not_the_key() -> None:
    clear, key = new_api_key("acme", "", 1.0)

    assert key.key_hash == hashlib.sha256(clear.encode()).hexdigest()
    assert clear not in key.model_dump_json()


def test_hash_key_is_sha256_hex() -> None:
    # the FIPS 180-2 test vector
    assert hash_key("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_every_key_is_new() -> None:
    minted = [new_api_key("acme", "", 1.0) for _ in range(50)]

    assert len({clear for clear, _ in minted}) == 50
    assert len({key.key_id for _, key in minted}) == 50


def test_a_key_needs_a_tenant() -> None:
    with pytest.raises(UsageError, match="tenant"):
        new_api_key("", "ci", 1.0)


@pytest.mark.parametrize("tenant", ["acme/staging", "acme\n", "x" * 129])
def test_a_key_for_what_is_no_tenant_is_refused(tenant: str) -> None:
    # a tenant is the first segment of the rules' scope: a "/" would move the others
    with pytest.raises(UsageError, match="is not a tenant"):
        new_api_key(tenant, "ci", 1000.0)


def test_a_clear_key_cannot_be_stored_as_the_hash() -> None:
    clear, key = new_api_key("acme", "", 1.0)

    with pytest.raises(ValidationError, match="key_hash"):
        ApiKey.model_validate(key.model_dump() | {"key_hash": clear})


# --- tenant_for ----------------------------------------------------------------------------


def test_a_valid_key_gives_its_tenant(store: MemoryStore) -> None:
    acme, _ = issue(store, "acme")
    globex, _ = issue(store, "globex")

    assert tenant_for(store.api_keys, acme, allow_anonymous=False) == "acme"
    assert tenant_for(store.api_keys, globex, allow_anonymous=True) == "globex"


def test_no_key_is_the_default_tenant_when_anonymous_callers_are_allowed(
    store: MemoryStore,
) -> None:
    assert tenant_for(store.api_keys, None, allow_anonymous=True) == ANONYMOUS_TENANT == "default"


def test_no_key_is_unauthorized_when_anonymous_callers_are_not_allowed(store: MemoryStore) -> None:
    with pytest.raises(Unauthorized, match="an API key is required"):
        tenant_for(store.api_keys, None, allow_anonymous=False)


@pytest.mark.parametrize("allow_anonymous", [True, False])
def test_an_unknown_key_is_unauthorized_even_where_anonymous_callers_are_allowed(
    store: MemoryStore, allow_anonymous: bool
) -> None:
    issue(store)
    forged, _ = new_api_key("acme", "", 1.0)  # well formed, never stored

    with pytest.raises(Unauthorized, match="invalid API key"):
        tenant_for(store.api_keys, forged, allow_anonymous=allow_anonymous)


@pytest.mark.parametrize("allow_anonymous", [True, False])
def test_an_empty_key_is_an_invalid_key_not_a_missing_one(
    store: MemoryStore, allow_anonymous: bool
) -> None:
    with pytest.raises(Unauthorized, match="invalid API key"):
        tenant_for(store.api_keys, "", allow_anonymous=allow_anonymous)


def test_a_revoked_key_is_unauthorized_with_the_same_message_as_an_unknown_one(
    store: MemoryStore,
) -> None:
    clear, key = issue(store)
    assert tenant_for(store.api_keys, clear, allow_anonymous=False) == "acme"

    store.api_keys.revoke(key.key_id, at=2000.0)

    with pytest.raises(Unauthorized) as refused:
        tenant_for(store.api_keys, clear, allow_anonymous=True)
    assert str(refused.value) == "invalid API key"


def test_the_stored_hash_is_not_a_key(store: MemoryStore) -> None:
    _, key = issue(store)

    with pytest.raises(Unauthorized, match="invalid API key"):
        tenant_for(store.api_keys, key.key_hash, allow_anonymous=False)


def test_a_lookup_that_matches_loosely_does_not_let_a_key_in() -> None:
    _, stored = new_api_key("acme", "", 1.0)
    other, _ = new_api_key("acme", "", 1.0)

    with pytest.raises(Unauthorized, match="invalid API key"):
        tenant_for(LooseKeys(stored), other, allow_anonymous=False)


# --- what the store holds ------------------------------------------------------------------


def test_no_item_of_the_store_holds_a_clear_key(store: MemoryStore) -> None:
    clears = [issue(store, tenant)[0] for tenant in ("acme", "acme", "globex")]
    store.api_keys.revoke(store.api_keys.list("globex")[0].key_id, at=5.0)

    # the in-memory adapter's raw items, as DynamoDB would store them
    items = list(store.api_keys._items._rows.values())
    stored = json.dumps(items)

    assert len(items) == 9  # three items per key: by hash, by id, in the listing
    for clear in clears:
        assert clear not in stored
        # nor its random part alone (after `sok_sk_xxxxxxxx_`; it may contain "_" itself)
        assert clear.split("_", 3)[3] not in stored
        assert hash_key(clear) in stored
