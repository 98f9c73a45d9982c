"""Contract of the ApiKeys port: found by hash, revoked by id, listed by tenant, never in clear."""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from signoff.errors import NotFound, UsageError
from signoff.keys.api_keys import hash_key, new_api_key
from signoff.store.memory import MemoryStore
from signoff.store.records import ApiKey

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.contract.conftest import Store

REVOKERS = 8
ROUNDS = 5


def key(key_id: str, tenant: str = "acme", *, secret: str | None = None, **changes: Any) -> ApiKey:
    """A key record whose clear key is ``secret`` (by default derived from the id)."""
    clear = secret or f"sok_{key_id}_secret"
    base = ApiKey(key_id=key_id, tenant=tenant, key_hash=hash_key(clear), created_at=1.0)
    return base.model_copy(update=changes)


def raw_items(store: Store) -> list[dict[str, Any]]:
    """Every item the store holds, as stored (not through the ports)."""
    if isinstance(store, MemoryStore):
        # the in-memory adapter's storage; read directly, as a scan reads DynamoDB
        return list(store.api_keys._items._rows.values())
    client = boto3.client("dynamodb")
    pages = client.get_paginator("scan").paginate(TableName=store.table.name)
    return [item for page in pages for item in page["Items"]]


def test_an_added_key_is_found_by_its_hash(store: Store) -> None:
    added = key("sk_aaaaaaaa", label="ci")

    store.api_keys.add(added)

    assert store.api_keys.find(added.key_hash) == added
    assert store.api_keys.find(hash_key("sok_unknown")) is None


def test_adding_the_same_key_twice_is_refused(store: Store) -> None:
    added = key("sk_aaaaaaaa")
    store.api_keys.add(added)

    with pytest.raises(UsageError, match="sk_aaaaaaaa"):
        store.api_keys.add(added)

    assert store.api_keys.list() == [added]


def test_a_key_reusing_an_id_is_refused_and_nothing_of_it_is_written(store: Store) -> None:
    first = key("sk_aaaaaaaa", tenant="acme")
    store.api_keys.add(first)
    clash = key("sk_aaaaaaaa", tenant="globex", secret="sok_other_secret")

    with pytest.raises(UsageError):
        store.api_keys.add(clash)

    # the clash's hash item would have been new: it was not written either
    assert store.api_keys.find(clash.key_hash) is None
    assert store.api_keys.list() == [first]
    assert store.api_keys.list("globex") == []


def test_a_key_reusing_a_hash_is_refused_and_nothing_of_it_is_written(store: Store) -> None:
    first = key("sk_aaaaaaaa", secret="sok_shared")
    store.api_keys.add(first)
    clash = key("sk_bbbbbbbb", tenant="globex", secret="sok_shared")

    with pytest.raises(UsageError):
        store.api_keys.add(clash)

    assert store.api_keys.find(first.key_hash) == first
    with pytest.raises(NotFound):
        store.api_keys.revoke("sk_bbbbbbbb", at=5.0)
    assert store.api_keys.list() == [first]


def test_a_revoked_key_is_still_found_and_carries_its_revocation(store: Store) -> None:
    added = key("sk_aaaaaaaa")
    store.api_keys.add(added)

    revoked = store.api_keys.revoke("sk_aaaaaaaa", at=50.0)

    assert revoked == added.model_copy(update={"revoked_at": 50.0})
    assert store.api_keys.find(added.key_hash) == revoked
    assert store.api_keys.list("acme") == [revoked]


def test_a_second_revocation_keeps_the_first_time(store: Store) -> None:
    store.api_keys.add(key("sk_aaaaaaaa"))
    first = store.api_keys.revoke("sk_aaaaaaaa", at=50.0)

    again = store.api_keys.revoke("sk_aaaaaaaa", at=90.0)

    assert again == first
    assert again.revoked_at == 50.0
    assert store.api_keys.list()[0].revoked_at == 50.0


def test_revoking_an_unknown_key_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound) as missing:
        store.api_keys.revoke("sk_nobody00", at=1.0)

    assert (missing.value.kind, missing.value.key) == ("API key", "sk_nobody00")


def test_revoking_one_key_leaves_the_others_usable(store: Store) -> None:
    kept, dropped = key("sk_aaaaaaaa"), key("sk_bbbbbbbb")
    store.api_keys.add(kept)
    store.api_keys.add(dropped)

    store.api_keys.revoke("sk_bbbbbbbb", at=5.0)

    assert store.api_keys.find(kept.key_hash) == kept
    assert [k.revoked_at for k in store.api_keys.list()] == [None, 5.0]


def test_list_is_by_tenant_then_key_id_across_pages(store: Store) -> None:
    # seven keys with a page size of three: the DynamoDB adapter pages
    added = [key(f"sk_{n:08d}", tenant=tenant) for n, tenant in enumerate("bababab")]
    for record in added:
        store.api_keys.add(record)

    listed = store.api_keys.list()

    assert listed == sorted(added, key=lambda k: (k.tenant, k.key_id))
    assert [k.key_id for k in store.api_keys.list("b")] == [
        "sk_00000000",
        "sk_00000002",
        "sk_00000004",
        "sk_00000006",
    ]


def test_list_of_a_tenant_matches_its_name_exactly(store: Store) -> None:
    for record in (
        key("sk_aaaaaaaa", tenant="acme"),
        key("sk_bbbbbbbb", tenant="acme#east"),
        key("sk_cccccccc", tenant="ac"),
    ):
        store.api_keys.add(record)

    assert [k.key_id for k in store.api_keys.list("acme")] == ["sk_aaaaaaaa"]
    assert [k.key_id for k in store.api_keys.list("acme#east")] == ["sk_bbbbbbbb"]
    assert [k.key_id for k in store.api_keys.list("ac")] == ["sk_cccccccc"]
    assert store.api_keys.list("globex") == []


def test_no_item_holds_a_clear_key(store: Store) -> None:
    clear, record = new_api_key("acme", "ci", 1.0)
    store.api_keys.add(record)
    store.api_keys.revoke(record.key_id, at=2.0)

    stored = json.dumps(raw_items(store), default=str)

    secret = clear.removeprefix(f"sok_{record.key_id}_")  # the random part may hold "_" too
    assert record.key_hash in stored  # the check reads the real items
    assert clear not in stored
    assert secret not in stored


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads far more often than usual, so the revocations really interleave."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)


@pytest.mark.usefixtures("busy_switching")
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_simultaneous_revocations_agree_on_one_time(store: Store, round_: int) -> None:
    # repeated: an adapter that lets a later revocation overwrite the first loses
    # only some races (see test_resolve_race.py on moto's one-request lock)
    store.api_keys.add(key("sk_aaaaaaaa"))
    start = threading.Barrier(REVOKERS)
    seen: list[ApiKey] = []
    failed: list[BaseException] = []

    def revoke(number: int) -> None:
        start.wait()
        try:
            seen.append(store.api_keys.revoke("sk_aaaaaaaa", at=100.0 + number))
        except BaseException as other:  # surfaced below, not swallowed
            failed.append(other)

    threads = [threading.Thread(target=revoke, args=(number,)) for number in range(REVOKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failed == []
    times = {k.revoked_at for k in seen}
    assert len(times) == 1
    stored = store.api_keys.list()[0]
    assert {stored.revoked_at} == times
    assert store.api_keys.find(stored.key_hash) == stored
