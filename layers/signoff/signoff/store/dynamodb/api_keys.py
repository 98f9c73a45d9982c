"""API keys in DynamoDB: three copies of each key, always written in one transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from signoff.errors import NotFound, StoreUnavailable
from signoff.store import codec, rules
from signoff.store.codec import visible
from signoff.store.dynamodb.table import Condition, TransactionRefused, all_of
from signoff.store.records import ApiKey

if TYPE_CHECKING:
    from signoff.store.codec import Codec, Item
    from signoff.store.dynamodb.table import DynamoTable

__all__ = ["DynamoApiKeys"]

# a new key takes a hash and an id nobody holds (a second add of the same key fails)
FREE: Final = "attribute_not_exists(#pk)"
# a revocation rewrites copies that exist, so it never recreates a half-written key
EXISTS: Final = "attribute_exists(#pk)"
# the first revocation wins; a later one must not move its time
NOT_REVOKED: Final = "attribute_not_exists(#revoked_at)"


class DynamoApiKeys:
    """API keys by hash, by key id and in one listing partition of the table."""

    def __init__(self, table: DynamoTable, coder: Codec) -> None:
        self._table = table
        self._codec = coder

    def _current(self, item: Item | None) -> ApiKey | None:
        if item is None or not visible(item, self._table.now()):
            return None
        return self._codec.decode(item, ApiKey)

    def add(self, key: ApiKey) -> None:
        """Store a new key; its three items are written together or not at all.

        Raises:
            UsageError: a key with that id or that hash is stored already.
        """
        fresh = Condition(expression=FREE)
        writes: list[tuple[Item, Condition | None]] = [
            (item, fresh) for item in codec.api_key_items(self._codec, key)
        ]
        try:
            self._table.transact(writes)
        except TransactionRefused as refused:
            raise rules.api_key_taken(key) from refused

    def find(self, key_hash: str) -> ApiKey | None:
        """The key with that hash, revoked ones included."""
        return self._current(self._table.get(codec.api_key_key(key_hash)))

    def revoke(self, key_id: str, *, at: float) -> ApiKey:
        """Mark the key revoked at ``at``; a key revoked before keeps its first time.

        Raises:
            NotFound: no key with that id.
        """
        current = self._current(self._table.get(codec.api_key_id_key(key_id)))
        if current is None:
            raise NotFound("API key", key_id)
        updated = rules.revoked(current, at)
        if updated is current:
            return current
        condition = Condition(expression=all_of(EXISTS, NOT_REVOKED))
        writes: list[tuple[Item, Condition | None]] = [
            (item, condition) for item in codec.api_key_items(self._codec, updated)
        ]
        try:
            self._table.transact(writes)
        except TransactionRefused as refused:
            # another revocation won between our read and our write: report its time
            winner = self._current(self._table.get(codec.api_key_id_key(key_id)))
            if winner is None or winner.revoked_at is None:
                raise StoreUnavailable(f"API key {key_id} changed; retry") from refused
            return winner
        return updated

    # last in the class: below it, ``list`` in an annotation would name this method
    def list(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (or one tenant's), by tenant then key id, paging as it goes."""
        pk, prefix = codec.api_key_listing(tenant)
        if prefix:
            pages = self._table.query(
                "#pk = :pk AND begins_with(#sk, :prefix)", {":pk": pk, ":prefix": prefix}
            )
        else:
            pages = self._table.query("#pk = :pk", {":pk": pk})
        keys = [record for page in pages for item in page if (record := self._current(item))]
        # a tenant whose name holds "#" shares a prefix with another one: match exactly
        return [key for key in keys if tenant is None or key.tenant == tenant]
