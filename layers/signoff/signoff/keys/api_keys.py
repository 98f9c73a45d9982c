"""API keys: minting one for a tenant, and finding the tenant of a request's key.

A clear key is ``sok_<key id>_<32 random url-safe characters>``. It is shown to
its owner once, when it is created; the store keeps only its SHA-256 hash, so a
leaked table or backup holds nothing a caller could present.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string
from typing import TYPE_CHECKING, Final

from signoff.errors import Unauthorized, UsageError
from signoff.gate.decision import TENANT
from signoff.store.records import ApiKey

if TYPE_CHECKING:
    from signoff.store.base import ApiKeys

__all__ = [
    "ANONYMOUS_TENANT",
    "KEY_ID_PREFIX",
    "KEY_PREFIX",
    "caller_for",
    "hash_key",
    "new_api_key",
    "new_key_id",
    "tenant_for",
]

KEY_PREFIX: Final = "sok_"
KEY_ID_PREFIX: Final = "sk_"
# The tenant of callers without a key, where a deployment allows them.
ANONYMOUS_TENANT: Final = "default"
# Lowercase letters and digits: a key id reads out loud and never holds the "_"
# that separates it from the secret part of a clear key.
_KEY_ID_ALPHABET: Final = string.ascii_lowercase + string.digits
_KEY_ID_LENGTH: Final = 8
# token_urlsafe(24) encodes 24 random bytes (192 bits) as exactly 32 characters.
_SECRET_BYTES: Final = 24


def new_key_id() -> str:
    """A fresh public key id: ``sk_`` and 8 random lowercase letters or digits."""
    suffix = "".join(secrets.choice(_KEY_ID_ALPHABET) for _ in range(_KEY_ID_LENGTH))
    return KEY_ID_PREFIX + suffix


def hash_key(clear: str) -> str:
    """The SHA-256 hex digest of a clear key: what the store keeps and looks up."""
    # A plain hash, not a slow password hash: the key has 192 random bits, so
    # there is nothing to guess, and every request pays for the hash.
    return hashlib.sha256(clear.encode()).hexdigest()


def new_api_key(tenant: str, label: str, now: float) -> tuple[str, ApiKey]:
    """A new key for ``tenant``: the clear key (to show once) and the record to store.

    Raises:
        UsageError: ``tenant`` is empty, or no tenant (a ``/``, a control character,
            more than 128 characters): the tenant is a segment of the rules' scope.
    """
    if not tenant:
        raise UsageError("an API key needs a tenant")
    if not TENANT.fullmatch(tenant):
        raise UsageError(
            f"{tenant!r} is not a tenant: at most 128 characters, no '/' and no control "
            "characters (a tenant is the first segment of a rule's scope)"
        )
    key_id = new_key_id()
    clear = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(_SECRET_BYTES)}"
    record = ApiKey(
        key_id=key_id, tenant=tenant, key_hash=hash_key(clear), created_at=now, label=label
    )
    return clear, record


def tenant_for(keys: ApiKeys, header_value: str | None, *, allow_anonymous: bool) -> str:
    """The tenant a request's API key belongs to.

    ``header_value`` is the key as the request carried it, or None when it
    carried none; an empty value is a key, and an invalid one.

    Raises:
        Unauthorized: no key where one is required, or a key unknown or revoked.
    """
    return caller_for(keys, header_value, allow_anonymous=allow_anonymous)[0]


def caller_for(
    keys: ApiKeys, header_value: str | None, *, allow_anonymous: bool
) -> tuple[str, str | None]:
    """The tenant and the key id of a request's API key (None: an anonymous caller).

    Raises:
        Unauthorized: no key where one is required, or a key unknown or revoked.
    """
    if header_value is None:
        if allow_anonymous:
            return ANONYMOUS_TENANT, None
        raise Unauthorized("an API key is required")
    presented = hash_key(header_value)
    found = keys.find(presented)
    # The store matched on the hash already; comparing in constant time here
    # means no adapter's lookup can be what decides, however it matches.
    known = found is not None and hmac.compare_digest(found.key_hash, presented)
    if found is None or not known or found.revoked_at is not None:
        # one message for unknown and revoked: a caller learns nothing about which
        raise Unauthorized("invalid API key")
    return found.tenant, found.key_id
