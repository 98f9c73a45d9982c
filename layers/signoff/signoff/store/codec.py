"""The layout every store adapter shares: keys, item dicts, indexes, TTL, large values.

Both adapters store the same item dicts, so size limits, TTL and conditions
behave identically; an adapter only supplies its primitives (a dict behind a
lock, or DynamoDB calls). An item is::

    pk, sk        the record's key (see the ``*_key`` functions)
    kind          which record it is
    body          the record as pydantic JSON, or ``blob:<key>`` when it was too large
    <live>        fields that conditions read or single updates change (``LIVE``)
    ttl           epoch seconds after which the item is gone, even if not yet deleted
    gsi1*         sparse index: pending items by expiry (``pending-by-expiry``)
    gsi2*         sparse index: outbox rows not sent (``outbox-unsent``), in three
                  partitions: unsent, failed with a retry due (by ``retry_at``), failed for good
    gsi3*         sparse index: running sessions by lease expiry (``leases-by-expiry``)
    gsi4*         sparse index: one tenant's pending items by request time, and its
                  audit entries of people, expiry and refusals by time (``by-tenant``),
                  for the approvals inbox

An API key is stored three times, written together: under its hash (the lookup
of a request), under its key id (revocation) and in one listing partition; no
index is needed for any of them. The state rules the adapters apply to these
items live in ``signoff.store.rules``, as conditions every ``Table`` applies.

Which sessions of an agent had a tool call gated on a day is one small item per
(agent, day, session) under ``G#<agent>#<YYYY-MM-DD>`` (UTC), sorted by
``<tenant>#<session id>`` and written with the commit whose log chunk holds the
decisions, so a replay of rule changes (``signoff.replay``) reads an agent's
recent history by key, one query per day, without a scan or an index.
"""

from __future__ import annotations

import json
import math
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, TypeVar

from signoff.errors import UsageError
from signoff.store.records import (
    ApiKey,
    AuditEntry,
    LogChunk,
    OutboxRow,
    PendingItem,
    SessionRecord,
)
from signoff.store.table import Index, Item, Key

if TYPE_CHECKING:
    from collections.abc import Sequence

    from signoff.store.base import Blobs
    from signoff.store.records import Vote

__all__ = [
    "BLOB_PREFIX",
    "FAILED_PARTITION",
    "ITEM_LIMIT",
    "JSON_LIVE",
    "LEASE_INDEX",
    "LIVE",
    "LOCK_REMOVES",
    "MAX_RESOLUTION_TEXT",
    "OFFLOAD_AT",
    "PENDING_INDEX",
    "RESOLUTION_REMOVES",
    "SETTLED_REMOVES",
    "TABLE_KEY",
    "TENANT_INDEX",
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
    "audit_key",
    "check_size",
    "chunk_key",
    "chunk_range",
    "due_before",
    "gated_days",
    "gated_entry",
    "gated_partition",
    "item_size",
    "key_of",
    "lease_index",
    "outbox_index",
    "outbox_key",
    "outbox_prefix",
    "pending_key",
    "retry_due_by",
    "session_key",
    "stalled_before",
    "tenant_audit",
    "tenant_pending",
    "time_key",
    "ttl_at",
    "ttl_of",
    "unsent_before",
    "votes_json",
    "waiting_after",
]

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

TABLE_KEY: Final = Index(None, "pk", "sk")
PENDING_INDEX: Final = Index("pending-by-expiry", "gsi1pk", "gsi1sk")
UNSENT_INDEX: Final = Index("outbox-unsent", "gsi2pk", "gsi2sk")
LEASE_INDEX: Final = Index("leases-by-expiry", "gsi3pk", "gsi3sk")
TENANT_INDEX: Final = Index("by-tenant", "gsi4pk", "gsi4sk")
_PENDING_PARTITION: Final = "PENDING"
_UNSENT_PARTITION: Final = "UNSENT"
_RETRY_PARTITION: Final = "RETRY"
# rows failed for good, by when they failed (``signoff outbox list --failed``)
FAILED_PARTITION: Final = "FAILED"
_RUNNING_PARTITION: Final = "RUNNING"
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
        "edited_args_json",
        "resumed",
        "retain_until",
        "reminders",
        "reminded_at",
        "escalation_step",
        "escalated_at",
        "votes",
        "vote_count",
    ),
    OutboxRow: (
        "created_at",
        "notified_at",
        "failed",
        "attempts",
        "last_error",
        "failures",
        "retry_at",
        "lock_owner",
        "lock_until",
        "receipt",
    ),
    AuditEntry: (),
    ApiKey: ("revoked_at",),
}

# Live attributes holding a list of records, stored as one JSON string (a nested
# map would need DynamoDB's number types inside it).
JSON_LIVE: Final = frozenset({"votes"})

# A resolved item leaves the sweeper's index and its tenant's pending list.
RESOLUTION_REMOVES: Final = ("gsi1pk", "gsi1sk", "gsi4pk", "gsi4sk")
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


def audit_key(subject: str, at: float, entry_id: str, *, rule: bool = False) -> Key:
    """The key of an audit entry; ``at`` first so entries sort by time.

    A gate rule's entries (one per tool call) have a partition of their own, so
    a session's decisions are read without them: the status route reads the
    decisions on every answer, a long-poll's too.
    """
    return f"{'AR' if rule else 'A'}#{subject}", f"{at:020.6f}#{entry_id}"


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


def gated_partition(agent: str, day: str) -> str:
    """The partition listing the sessions of ``agent`` with a call gated on ``day``."""
    return f"G#{agent}#{day}"


def _day(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")


def gated_days(since: float, until: float) -> list[str]:
    """The UTC days from ``since``'s to ``until``'s, oldest first."""
    first = datetime.fromtimestamp(since, UTC).date()
    last = datetime.fromtimestamp(until, UTC).date()
    return [str(first + timedelta(days=n)) for n in range((last - first).days + 1)]


def gated_entry(session: SessionRecord, at: float) -> Item:
    """The item saying that ``session`` had a call gated on ``at``'s day.

    It lives as long as the session's log (its ``ttl``); writing it again the same
    day rewrites the same item.
    """
    item: Item = {
        "pk": gated_partition(session.agent, _day(at)),
        "sk": f"{session.tenant}#{session.session_id}",
        "kind": "gated",
        "session_id": session.session_id,
    }
    ttl = ttl_at(session.expires_at)
    if ttl is not None:
        item["ttl"] = ttl
    return item


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
            return audit_key(record.subject, record.at, record.id, rule=record.kind == "rule")
        case ApiKey():
            return api_key_key(record.key_hash)


def due_before(now: float) -> tuple[str, str]:
    """Partition and exclusive upper sort key of pending items with ``expires_at <= now``."""
    # "$" sorts right after "#", so every "<now>#<id>" key is below the bound.
    return _PENDING_PARTITION, f"{now:020.6f}$"


def waiting_after(now: float) -> tuple[str, str]:
    """Partition and exclusive lower sort key of pending items with ``expires_at > now``."""
    # the complement of ``due_before``: every "<now>#<id>" key sorts below it
    return due_before(now)


def unsent_before(created_before: float) -> tuple[str, str]:
    """Partition and exclusive upper sort key of outbox rows created before a time."""
    return _UNSENT_PARTITION, f"{created_before:020.6f}"


def retry_due_by(now: float) -> tuple[str, str]:
    """Partition and exclusive upper sort key of failed rows whose retry is due by ``now``."""
    return _RETRY_PARTITION, f"{now:020.6f}$"


def outbox_index(row: OutboxRow | tuple[str, str], *, state: str, at: float) -> Item:
    """An outbox row's place in the ``outbox-unsent`` index.

    ``state`` is ``unsent`` (by ``at``: its creation, or when it was made sendable
    again), ``retry`` (by ``at``: its ``retry_at``) or ``failed`` (by ``at``: when
    it was given up). A sent row has no place.
    """
    pending_id, channel = (row.pending_id, row.channel) if isinstance(row, OutboxRow) else row
    partition = {"unsent": _UNSENT_PARTITION, "retry": _RETRY_PARTITION}.get(
        state, FAILED_PARTITION
    )
    return {"gsi2pk": partition, "gsi2sk": f"{at:020.6f}#{pending_id}#{channel}"}


def stalled_before(before: float) -> tuple[str, str]:
    """Partition and exclusive upper sort key of running sessions stalled by ``before``."""
    return _RUNNING_PARTITION, f"{before:020.6f}$"


def time_key(at: float, record_id: str = "") -> str:
    """A sort key that orders by time, then id: ``<at zero-padded>#<id>``."""
    return f"{at:020.6f}#{record_id}"


def tenant_pending(tenant: str) -> str:
    """The ``by-tenant`` partition of a tenant's items still pending."""
    return f"T#{tenant}#PENDING"


def tenant_audit(tenant: str) -> str:
    """The ``by-tenant`` partition of a tenant's audit entries (no rule decisions)."""
    return f"T#{tenant}#AUDIT"


def _tenant_attrs(record: Record) -> Item:
    """A record's place in the ``by-tenant`` index, if it has one."""
    if isinstance(record, PendingItem) and record.status == "pending":
        return {
            "gsi4pk": tenant_pending(record.tenant),
            "gsi4sk": time_key(record.requested_at, record.id),
        }
    # Rule decisions stay out: one per tool call, they would bury the people's.
    if isinstance(record, AuditEntry) and record.tenant is not None and record.kind != "rule":
        return {"gsi4pk": tenant_audit(record.tenant), "gsi4sk": time_key(record.at, record.id)}
    return {}


def lease_index(session_id: str, since: float) -> Item:
    """A running session's place in the lease index: when it stops counting as alive."""
    return {"gsi3pk": _RUNNING_PARTITION, "gsi3sk": f"{since:020.6f}#{session_id}"}


def _index_attrs(record: Record) -> Item:
    if isinstance(record, PendingItem) and record.status == "pending":
        return {"gsi1pk": _PENDING_PARTITION, "gsi1sk": f"{record.expires_at:020.6f}#{record.id}"}
    if isinstance(record, OutboxRow) and record.notified_at is None:
        if not record.failed:
            return outbox_index(record, state="unsent", at=record.created_at)
        if record.retry_at is not None:
            return outbox_index(record, state="retry", at=record.retry_at)
        return outbox_index(record, state="failed", at=record.created_at)
    if isinstance(record, SessionRecord) and record.status == "running" and record.state:
        # Only a turn with a checkpoint can be continued. One that yielded
        # (Continue) holds no lease: it stalls from the moment it stopped, unless
        # its continuation claims it first.
        since = record.lease_until if record.lease_until is not None else record.updated_at
        return lease_index(record.session_id, since)
    return {}


# --- TTL and size --------------------------------------------------------------------------


def ttl_at(when: float | None) -> int | None:
    """The ``ttl`` attribute for a record kept until ``when`` (None: kept for good)."""
    # Rounded up: an item is kept at least until the moment its record names.
    return None if when is None else math.ceil(when)


def ttl_of(record: Record) -> int | None:
    """Epoch seconds after which the store may drop the record, if ever."""
    if isinstance(record, SessionRecord | LogChunk):
        return ttl_at(record.expires_at)
    if isinstance(record, PendingItem | OutboxRow):
        return ttl_at(record.retain_until)
    return None


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

    def __init__(self, blobs: Blobs | None, *, offload_at: int = OFFLOAD_AT) -> None:
        # None: a store without a bucket (``signoff keys`` needs only the table);
        # a record too large for one item is then refused, not silently truncated.
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
            if name in JSON_LIVE:
                # a list of records: one JSON string, read and written whole
                value = votes_json(value) if value else None
            if value is not None:
                item[name] = value
        item.update(_index_attrs(record))
        item.update(_tenant_attrs(record))
        ttl = ttl_of(record)
        if ttl is not None:
            item["ttl"] = ttl
        body = record.model_dump_json(exclude=set(live))
        item["body"] = body
        if item_size(item) > self.offload_at:
            # Written before the item: a refused write leaves only an orphan
            # blob, which the bucket's lifecycle rule removes.
            if self.blobs is None:
                raise UsageError(
                    f"a {type(record).__name__} of {item_size(item)} bytes needs the bucket "
                    "for large values, and SIGNOFF_BUCKET is not set"
                )
            key = _blob_key(record)
            self.blobs.put(key, body.encode())
            item["body"] = BLOB_PREFIX + key
        check_size(item)
        return item

    def decode(self, item: Item, model: type[R]) -> R:
        """The record an item holds, its body read back from Blobs when it was moved."""
        body: str = item["body"]
        if body.startswith(BLOB_PREFIX):
            if self.blobs is None:
                raise UsageError(
                    f"{item['pk']} keeps its body in the bucket, and SIGNOFF_BUCKET is not set"
                )
            body = self.blobs.get(body.removeprefix(BLOB_PREFIX)).decode()
        data = json.loads(body)
        for name in LIVE[model]:
            if name in item:
                data[name] = json.loads(item[name]) if name in JSON_LIVE else item[name]
        return model.model_validate(data)


def votes_json(votes: Sequence[Vote]) -> str:
    """An item's votes as its ``votes`` attribute holds them."""
    return json.dumps([vote.model_dump(mode="json") for vote in votes], separators=(",", ":"))


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
