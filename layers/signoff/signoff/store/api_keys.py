"""API keys over a ``Table``: three copies of each key, always written in one transaction."""

from __future__ import annotations

from signoff.errors import NotFound, StoreUnavailable
from signoff.store import codec, keys, rules
from signoff.store.records import ApiKey
from signoff.store.stored import Stored
from signoff.store.table import Attr, ConditionFailed, Put

__all__ = ["TableApiKeys"]


class TableApiKeys(Stored):
    """The ``ApiKeys`` port: keys by hash, by key id and in one listing partition."""

    def add(self, key: ApiKey) -> None:
        """Store a new key; its three items are written together or not at all.

        Raises:
            UsageError: a key with that id or that hash is stored already.
        """
        items = codec.api_key_items(self._codec, key)
        try:
            self._items.transact([Put(item, rules.FREE_KEY) for item in items])
        except ConditionFailed as refused:
            raise rules.api_key_taken(key) from refused

    def find(self, key_hash: str) -> ApiKey | None:
        """The key with that hash, revoked ones included."""
        return self._read(self._items.get(keys.api_key_key(key_hash)), ApiKey)

    def revoke(self, key_id: str, *, at: float) -> ApiKey:
        """Mark the key revoked at ``at``; a key revoked before keeps its first time.

        Raises:
            NotFound: no key with that id.
        """
        current = self._read(self._items.get(keys.api_key_id_key(key_id)), ApiKey)
        if current is None:
            raise NotFound("API key", key_id)
        updated = rules.revoked(current, at)
        if updated is current:
            return current
        items = codec.api_key_items(self._codec, updated)
        try:
            self._items.transact([Put(item, rules.UNREVOKED_KEY) for item in items])
        except ConditionFailed as refused:
            # another revocation won between our read and our write: report its time
            winner = self._read(self._items.get(keys.api_key_id_key(key_id)), ApiKey)
            if winner is None or winner.revoked_at is None:
                raise StoreUnavailable(f"API key {key_id} changed; retry") from refused
            return winner
        return updated

    # last in the class: below it, ``list`` in an annotation would name this method
    def list(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (or one tenant's), by tenant then key id, paging as it goes."""
        pk, prefix = keys.api_key_listing(tenant)
        sort = Attr("sk").begins_with(prefix) if prefix else None
        found = self._found(self._items.query(pk, sort, index=keys.TABLE_KEY), ApiKey)
        # a tenant whose name holds "#" shares a prefix with another one: match exactly
        return [key for key in found if tenant is None or key.tenant == tenant]
