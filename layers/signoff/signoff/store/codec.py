"""The algorithm every store adapter shares: keys, item dicts, TTL, large values, rules.

Both adapters store the same item dicts, so size limits, TTL and conditions
behave identically; an adapter only supplies its primitives (a dict behind a
lock, or DynamoDB calls). An item is::

    pk, sk        the record's key (see the ``*_key`` functions)
    kind          which record it is
    body          the record as pydantic JSON, or ``blob:<key>`` when it was too large
    <live>        fields that conditions read or single updates change (``LIVE``)
    ttl           epoch seconds after which the item is gone, even if not yet deleted
    gsi1*, gsi2*  sparse index keys: pending items by expiry, unsent outbox rows

An API key is stored three times, written together: under its hash (the lookup
of a request), under its key id (revocation) and in one listing partition; no
index is needed for any of them.
"""

from __future__ import annotations

import json
import math
import uuid
from typing import TYPE_CHECKING, Any, Final, TypeVar

from signoff.errors import (
    AlreadyResolved,
    Expired,
    NotFound,
    SessionBusy,
    SignoffError,
    UsageError,
)
from signoff.store.records import (
    ApiKey,
    AuditEntry,
    LogChunk,
    OutboxRow,
    PendingItem,
    SessionRecord,
)

if TYPE_CHECKING:
    from signoff.store.base import Blobs, ClaimFor
    from signoff.store.records import Commit, PendingStatus

__all__ = [
    "BLOB_PREFIX",
    "ITEM_LIMIT",
    "LIVE",
    "LOCK_REMOVES",
    "MAX_RESOLUTION_TEXT",
    "OFFLOAD_AT",
    "PENDING_INDEX",
    "RESOLUTION_REMOVES",
    "SENT_REMOVES",
    "SETTLED_REMOVES",
    "UNSENT_INDEX",
    "Codec",
    "Item",
    "Key",
    "Record",
    "api_key_id_key",
    "api_key_items",
    "api_key_key",
    "api_key_listing",
    "api_key_listing_key",
    "api_key_taken",
    "audit_key",
    "check_size",
    "chunk_key",
    "chunk_range",
    "claim_attrs",
    "claim_refusal",
    "claimable",
    "committed_session",
    "due_before",
    "item_size",
    "key_of",
    "outbox_key",
    "outbox_prefix",
    "pending_key",
    "resolution_attrs",
    "resolution_refusal",
    "revoked",
    "sendable",
    "session_key",
    "ttl_of",
    "unsent_before",
    "visible",
]

Item = dict[str, Any]
Key = tuple[str, str]
Record = SessionRecord | LogChunk | PendingItem | OutboxRow | AuditEntry | ApiKey
R = TypeVar("R", SessionRecord, LogChunk, PendingItem, OutboxRow, AuditEntry, ApiKey)

# DynamoDB refuses items over 400 KB; bodies move to Blobs well before that, so
# the live attributes and keys always fit next to a blob pointer.
ITEM_LIMIT: Final = 400 * 1024
OFFLOAD_AT: Final = 350 * 1024
BLOB_PREFIX: Final = "blob:"
# A resolution's answer and note are set in place next to a body of up to
# OFFLOAD_AT, so together they must fit in what is left under ITEM_LIMIT.
MAX_RESOLUTION_TEXT: Final = 32 * 1024

PENDING_INDEX: Final = "pending-by-expiry"
UNSENT_INDEX: Final = "outbox-unsent"
_PENDING_PARTITION: Final = "PENDING"
_UNSENT_PARTITION: Final = "UNSENT"
_KEYS_PARTITION: Final = "KEYS"

_KIND: Final[dict[type[Record], str]] = {
    SessionRecord: "session",
    LogChunk: "chunk",
    PendingItem: "pending",
    OutboxRow: "outbox",
    AuditEntry: "audit",
    ApiKey: "api_key",
}

# Fields kept as top-level attributes instead of in the body: conditions read
# them, and a claim, a resolution or a sent mark changes them with one update.
LIVE: Final[dict[type[Record], tuple[str, ...]]] = {
    SessionRecord: ("status", "pending_id", "lease_owner", "lease_until", "updated_at"),
    LogChunk: (),
    PendingItem: (
        "status",
        "expires_at",
        "resolved_by",
        "resolved_via",
        "resolved_at",
        "answer",
        "note",
        "resumed",
        "retain_until",
    ),
    OutboxRow: (
        "created_at",
        "notified_at",
        "failed",
        "attempts",
        "last_error",
        "lock_owner",
        "lock_until",
        "receipt",
    ),
    AuditEntry: (),
    ApiKey: ("revoked_at",),
}

# A resolved item leaves the sweeper's index; a sent row leaves the unsent index.
RESOLUTION_REMOVES: Final = ("gsi1pk", "gsi1sk")
SENT_REMOVES: Final = ("gsi2pk", "gsi2sk")
# Sending is over for a row (sent or failed for good): it leaves the unsent
# index and its lock.
SETTLED_REMOVES: Final = ("gsi2pk", "gsi2sk", "lock_owner", "lock_until")
LOCK_REMOVES: Final = ("lock_owner", "lock_until")

_LOG_END: Final = 9_999_999_999_999_999


# --- keys ----------------------------------------------------------------------------------


def session_key(session_id: str) -> Key:
    """The key of a session's own item."""
    return f"S#{session_id}", "META"


def chunk_key(session_id: str, seq: int) -> Key:
    """The key of one log chunk; zero-padded so chunks sort by ``seq``."""
    return f"S#{session_id}", f"L#{seq:016d}"


def chunk_range(session_id: str, from_seq: int) -> tuple[str, str, str]:
    """Partition and inclusive sort-key bounds of the log from ``from_seq`` on."""
    pk, low = chunk_key(session_id, from_seq)
    return pk, low, chunk_key(session_id, _LOG_END)[1]


def pending_key(pending_id: str) -> Key:
    """The key of a pending item."""
    return f"P#{pending_id}", "META"


def outbox_key(pending_id: str, channel: str) -> Key:
    """The key of one channel's outbox row, beside its pending item."""
    return f"P#{pending_id}", f"O#{channel}"


def outbox_prefix(pending_id: str) -> Key:
    """Partition and sort-key prefix of a pending item's outbox rows."""
    return f"P#{pending_id}", "O#"


def audit_key(subject: str, at: float, entry_id: str) -> Key:
    """The key of an audit entry; ``at`` first so entries sort by time."""
    return f"A#{subject}", f"{at:020.6f}#{entry_id}"


def api_key_key(key_hash: str) -> Key:
    """The key of an API key's item under its hash: what a request's key is looked up by."""
    return f"K#{key_hash}", "META"


def api_key_id_key(key_id: str) -> Key:
    """The key of an API key's copy under its public id, for revocation."""
    return f"KID#{key_id}", "META"


def api_key_listing_key(tenant: str, key_id: str) -> Key:
    """The key of an API key's copy in the listing partition, sorted by tenant."""
    return _KEYS_PARTITION, f"{tenant}#{key_id}"


def api_key_listing(tenant: str | None) -> Key:
    """Partition and sort-key prefix of the listing of one tenant's keys ("": every key)."""
    return _KEYS_PARTITION, "" if tenant is None else f"{tenant}#"


def key_of(record: Record) -> Key:
    """The key a record is stored under."""
    match record:
        case SessionRecord():
            return session_key(record.session_id)
        case LogChunk():
            return chunk_key(record.session_id, record.seq)
        case PendingItem():
            return pending_key(record.id)
        case OutboxRow():
            return outbox_key(record.pending_id, record.channel)
        case AuditEntry():
            return audit_key(record.subject, record.at, record.id)
        case ApiKey():
            return api_key_key(record.key_hash)


def due_before(now: float) -> tuple[str, str]:
    """Partition and exclusive upper sort key of pending items with ``expires_at <= now``."""
    # "$" sorts right after "#", so every "<now>#<id>" key is below the bound.
    return _PENDING_PARTITION, f"{now:020.6f}$"


def unsent_before(created_before: float) -> tuple[str, str]:
    """Partition and exclusive upper sort key of outbox rows created before a time."""
    return _UNSENT_PARTITION, f"{created_before:020.6f}"


def _index_attrs(record: Record) -> Item:
    if isinstance(record, PendingItem) and record.status == "pending":
        return {"gsi1pk": _PENDING_PARTITION, "gsi1sk": f"{record.expires_at:020.6f}#{record.id}"}
    if isinstance(record, OutboxRow) and record.notified_at is None and not record.failed:
        sort = f"{record.created_at:020.6f}#{record.pending_id}#{record.channel}"
        return {"gsi2pk": _UNSENT_PARTITION, "gsi2sk": sort}
    return {}


# --- TTL and size --------------------------------------------------------------------------


def _ttl(when: float | None) -> int | None:
    # Rounded up: an item is kept at least until the moment its record names.
    return None if when is None else math.ceil(when)


def ttl_of(record: Record) -> int | None:
    """Epoch seconds after which the store may drop the record, if ever."""
    if isinstance(record, SessionRecord | LogChunk):
        return _ttl(record.expires_at)
    if isinstance(record, PendingItem):
        return _ttl(record.retain_until)
    return None


def visible(item: Item | None, now: float) -> bool:
    """Whether an item exists for readers: DynamoDB deletes expired items lazily."""
    if item is None:
        return False
    ttl = item.get("ttl")
    return ttl is None or ttl > now


def _value_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bool) or value is None:
        return 1
    # DynamoDB stores numbers in up to 21 bytes; a float's repr is a fair bound.
    return min(21, len(repr(value)) // 2 + 2)


def item_size(item: Item) -> int:
    """The item's size as DynamoDB counts it: attribute names plus values, in bytes."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


# --- records <-> items ---------------------------------------------------------------------


def _blob_key(record: Record) -> str:
    # A fresh suffix per write: a writer that lost its lease must not overwrite
    # the blob a newer writer's item already points at.
    unique = uuid.uuid4().hex
    match record:
        case SessionRecord():
            return f"sessions/{record.session_id}/state/{unique}"
        case LogChunk():
            return f"sessions/{record.session_id}/chunks/{record.seq:010d}-{unique}"
        case PendingItem():
            return f"pending/{record.id}/{unique}"
        case OutboxRow():
            return f"pending/{record.pending_id}/outbox/{record.channel}-{unique}"
        case AuditEntry():
            return f"audit/{record.subject}/{record.id}-{unique}"
        case ApiKey():
            return f"api-keys/{record.key_id}-{unique}"


class Codec:
    """Turns records into item dicts and back, moving large bodies to ``blobs``."""

    def __init__(self, blobs: Blobs, *, offload_at: int = OFFLOAD_AT) -> None:
        self.blobs = blobs
        self.offload_at = offload_at

    def encode(self, record: Record) -> Item:
        """The item for ``record``; a body too large for one item goes to Blobs.

        Raises:
            UsageError: the item would exceed DynamoDB's limit even without its body.
        """
        pk, sk = key_of(record)
        live = LIVE[type(record)]
        item: Item = {"pk": pk, "sk": sk, "kind": _KIND[type(record)]}
        for name in live:
            value = getattr(record, name)
            if value is not None:
                item[name] = value
        item.update(_index_attrs(record))
        ttl = ttl_of(record)
        if ttl is not None:
            item["ttl"] = ttl
        body = record.model_dump_json(exclude=set(live))
        item["body"] = body
        if item_size(item) > self.offload_at:
            # Written before the item: a refused write leaves only an orphan
            # blob, which the bucket's lifecycle rule removes.
            key = _blob_key(record)
            self.blobs.put(key, body.encode())
            item["body"] = BLOB_PREFIX + key
        check_size(item)
        return item

    def decode(self, item: Item, model: type[R]) -> R:
        """The record an item holds, its body read back from Blobs when it was moved."""
        body: str = item["body"]
        if body.startswith(BLOB_PREFIX):
            body = self.blobs.get(body.removeprefix(BLOB_PREFIX)).decode()
        data = json.loads(body)
        for name in LIVE[model]:
            if name in item:
                data[name] = item[name]
        return model.model_validate(data)


def api_key_items(coder: Codec, key: ApiKey) -> list[Item]:
    """The three items of one API key: under its hash, under its key id, in the listing."""
    item = coder.encode(key)
    where = [
        api_key_key(key.key_hash),
        api_key_id_key(key.key_id),
        api_key_listing_key(key.tenant, key.key_id),
    ]
    return [item | {"pk": pk, "sk": sk} for pk, sk in where]


def check_size(item: Item) -> None:
    """Refuse an item DynamoDB would refuse, in every adapter alike.

    Raises:
        UsageError: the item is over ``ITEM_LIMIT``.
    """
    size = item_size(item)
    if size > ITEM_LIMIT:
        raise UsageError(
            f"{item['kind']} item {item['pk']}/{item['sk']} is {size} bytes "
            f"even with its body moved out; the limit is {ITEM_LIMIT}"
        )


# --- rules ---------------------------------------------------------------------------------


def claimable(
    current: SessionRecord | None,
    purpose: ClaimFor,
    owner: str,
    now: float,
    pending_id: str | None = None,
) -> bool:
    """Whether ``owner`` may take the session's lease for ``purpose`` (DESIGN.md §5)."""
    if current is None:
        # only a message starts a session; resume and redrive need one to exist
        return purpose == "message"
    # nobody else holds a live lease: none at all, run out, or already ours
    lease_free = (
        current.lease_owner is None
        or (current.lease_until is not None and current.lease_until <= now)
        or current.lease_owner == owner
    )
    # a message runs only between turns
    between_turns = current.status in ("idle", "done")
    # a resume continues exactly the pause it resolves
    waits_on_it = current.status == "paused" and pending_id is not None
    waits_on_it = waits_on_it and current.pending_id == pending_id
    # a redrive picks up a turn whose holder stopped renewing its lease
    running = current.status == "running"
    wanted = {"message": between_turns, "resume": waits_on_it, "redrive": running}
    return wanted[purpose] and lease_free


def claim_refusal(session_id: str, current: SessionRecord | None) -> SignoffError:
    """The error for a claim ``claimable`` refused."""
    if current is None:
        return NotFound("session", session_id)
    return SessionBusy(session_id, status=current.status, pending_id=current.pending_id)


def claim_attrs(*, owner: str, until: float, now: float) -> Item:
    """The live attributes a successful claim sets."""
    return {"status": "running", "lease_owner": owner, "lease_until": until, "updated_at": now}


def committed_session(commit: Commit, owner: str) -> SessionRecord:
    """The session as a commit stores it: the lease kept by ``owner`` or given up."""
    if commit.release:
        return commit.session.model_copy(update={"lease_owner": None, "lease_until": None})
    return commit.session.model_copy(update={"lease_owner": owner})


def resolution_refusal(
    pending_id: str, current: PendingItem | None, status: PendingStatus, now: float
) -> SignoffError | None:
    """Why ``current`` cannot move to ``status`` at ``now``, or None when it can."""
    if current is None:
        return NotFound("pending item", pending_id)
    if current.status == "expired" and status != "expired":
        # swept or not, a human who came too late hears the same thing
        return Expired(current)
    if current.status != "pending":
        # the first resolution won; later ones see it
        return AlreadyResolved(current)
    due = current.expires_at <= now
    if status == "expired":
        return None if due else UsageError(f"pending item {pending_id} is not due yet")
    return Expired(current) if due else None


def resolution_attrs(
    *,
    status: PendingStatus,
    actor: str,
    channel: str,
    now: float,
    answer: str | None,
    note: str | None,
    retain_until: float | None,
) -> Item:
    """The live attributes (and ttl) a successful resolution sets.

    Raises:
        UsageError: ``answer`` and ``note`` together exceed ``MAX_RESOLUTION_TEXT`` bytes.
    """
    text = len((answer or "").encode()) + len((note or "").encode())
    if text > MAX_RESOLUTION_TEXT:
        raise UsageError(f"answer and note are {text} bytes; at most {MAX_RESOLUTION_TEXT}")
    attrs: Item = {"status": status, "resolved_by": actor, "resolved_via": channel}
    attrs["resolved_at"] = now
    optional = {"answer": answer, "note": note, "retain_until": retain_until}
    attrs.update({name: value for name, value in optional.items() if value is not None})
    ttl = _ttl(retain_until)
    if ttl is not None:
        attrs["ttl"] = ttl
    return attrs


def api_key_taken(key: ApiKey) -> SignoffError:
    """The error for adding a key whose id or hash is stored already."""
    return UsageError(f"API key {key.key_id} (or one with the same secret) exists already")


def revoked(current: ApiKey, at: float) -> ApiKey:
    """The key after a revocation at ``at``; a key revoked before keeps its first time."""
    if current.revoked_at is not None:
        return current
    return current.model_copy(update={"revoked_at": at})


def sendable(row: OutboxRow, *, owner: str, now: float) -> bool:
    """Whether ``owner`` may take the send lock of ``row`` now."""
    # not sent yet: notified_at is set only after a channel accepted the send
    unsent = row.notified_at is None
    # not given up on: a permanent failure is recorded, not retried
    alive = not row.failed
    # nobody else is sending it now: no lock, an expired one, or our own
    free = row.lock_owner is None or (row.lock_until or 0) <= now or row.lock_owner == owner
    return unsent and alive and free
