"""The item every store adapter writes: live attributes, index places, TTL, large values.

Both adapters store the same item dicts, so size limits, TTL and conditions
behave identically; an adapter only supplies its primitives (a dict behind a
lock, or DynamoDB calls). An item is::

    pk, sk        the record's key (``signoff.store.keys``)
    kind          which record it is
    body          the record as pydantic JSON, or ``blob:<key>`` when it was too large
    zbody         instead of ``body``, beyond ``COMPRESS_AT`` bytes: that JSON
                  compressed (binary, ``signoff.store.packing``): a step's two
                  bodies take a third of their JSON
    <live>        fields that conditions read or single updates change (``LIVE``)
    ttl           epoch seconds after which the item is gone, even if not yet deleted
    gsi4*         sparse index: one tenant's pending items by request time, and its
                  audit entries of people, expiry and refusals by time (``by-tenant``),
                  for the approvals inbox; each tenant's partitions sharded
    gsi5*         sparse, keys only: what a sweep reads, by when it is due (``sweep``),
                  in sharded partitions: pending items by their next due time, sessions
                  running from a checkpoint by lease, outbox rows unsent, retrying, failed
    gsi1-3*       the previous release's sweep indexes (``pending-by-expiry``,
                  ``outbox-unsent``, ``leases-by-expiry``): no longer written; every
                  write drops them, and ``signoff.store.migrate`` moves what still has them

An API key is stored three times, written together: under its hash (the lookup
of a request), under its key id (revocation) and in one listing partition; no
index is needed for any of them. The state rules the adapters apply to these
items live in ``signoff.store.rules``, as conditions every ``Table`` applies.

Which sessions of an agent had a tool call gated on a day is one small item per
(agent, day, session) under ``G#<agent>#<YYYY-MM-DD>`` (UTC; sharded), written by
the session's first commit of the day that gated a call, sorted by
``<tenant>#<session id>`` and written with the commit whose log chunk holds the
decisions, so a replay of rule changes (``signoff.approvals.replay``) reads an agent's
recent history by key, one query per day and shard, without a scan or an index.
"""

from __future__ import annotations

import json
import math
import uuid
from typing import TYPE_CHECKING, Any, Final, TypeVar

from signoff.errors import UsageError
from signoff.store import packing
from signoff.store.keys import (
    DUE,
    FAILED,
    LEASES,
    LEGACY_KEYS,
    RETRIES,
    SENDS,
    SWEEP_KEYS,
    TENANT_KEYS,
    Shards,
    api_key_id_key,
    api_key_key,
    api_key_listing_key,
    day_of,
    gated_partition,
    is_chunk,
    is_session,
    key_of,
    shard_of,
    sweep_partition,
    tenant_audit,
    tenant_pending,
    time_key,
)
from signoff.store.pending_records import OutboxRow, PendingItem
from signoff.store.records import ApiKey, AuditEntry, Record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from signoff.store.base import Blobs
    from signoff.store.pending_records import Vote
    from signoff.store.session_records import SessionRecord
    from signoff.store.table import Item

__all__ = [
    "BLOB_PREFIX",
    "ITEM_LIMIT",
    "JSON_LIVE",
    "LIVE",
    "LOCK_REMOVES",
    "MAX_RESOLUTION_TEXT",
    "OFFLOAD_AT",
    "PENDING_OFFLOAD_AT",
    "RESOLUTION_REMOVES",
    "RESUME_GRACE",
    "SETTLED_REMOVES",
    "Codec",
    "Record",
    "api_key_items",
    "check_size",
    "gated_entry",
    "item_size",
    "next_due",
    "ttl_at",
    "ttl_of",
    "votes_json",
]

R = TypeVar("R", bound=Record)

# DynamoDB refuses items over 400 KB; bodies move to Blobs well before that, so
# the live attributes and keys always fit next to a blob pointer.
ITEM_LIMIT: Final = 400 * 1024
OFFLOAD_AT: Final = 350 * 1024
# A pending item's body (its tool arguments) beyond this goes to the bucket too.
PENDING_OFFLOAD_AT: Final = 4 * 1024
BLOB_PREFIX: Final = "blob:"
# A body beyond this is stored packed (``zbody``); a shorter one as it is, readable
# in the console, where packing would save a few bytes.
COMPRESS_AT: Final = 256
# A resolution's answer and note are set in place next to a body of up to
# OFFLOAD_AT, so together they must fit in what is left under ITEM_LIMIT.
MAX_RESOLUTION_TEXT: Final = 32 * 1024

# A resolved item stays due this long after its resolution while its turn is not
# resumed: the sweep resumes a turn whose resolving process died before it could.
RESUME_GRACE: Final = 60.0

# Fields kept as top-level attributes instead of in the body: conditions read
# them, and a claim, a resolution or a sent mark changes them with one update.
# By the record's ``item_kind``, so the session records are imported only by
# paths that hold them.
LIVE: Final[dict[str, tuple[str, ...]]] = {
    "session": (
        "status",
        "pending_id",
        "lease_owner",
        "lease_until",
        "lease_key_at",
        "updated_at",
    ),
    "chunk": (),
    "pending": (
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
        "remind_after",
        "escalation_step",
        "escalated_at",
        "votes",
        "vote_count",
    ),
    "outbox": (
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
    "audit": (),
    "api_key": ("revoked_at",),
}

# Live attributes holding a list of records, stored as one JSON string (a nested
# map would need DynamoDB's number types inside it).
JSON_LIVE: Final = frozenset({"votes"})

# A resolved item leaves its tenant's pending list (and the old indexes); its
# sweep key moves to the resume check (``Codec.owed_key``).
RESOLUTION_REMOVES: Final = (*TENANT_KEYS, *LEGACY_KEYS)
# Sending is over for a row (sent): it leaves the sweep index and its lock.
SETTLED_REMOVES: Final = (*SWEEP_KEYS, *LEGACY_KEYS, "lock_owner", "lock_until")
LOCK_REMOVES: Final = ("lock_owner", "lock_until")

# --- the gated-sessions listing, the sweep's due time --------------------------------------


def gated_entry(session: SessionRecord, at: float, shards: int) -> Item:
    """The item saying that ``session`` had a call gated on ``at``'s day, in the
    session's shard of the agent's day.

    It lives as long as the session's log (its ``ttl``); writing it again the same
    day rewrites the same item.
    """
    shard = shard_of(session.session_id, shards)
    item: Item = {
        "pk": gated_partition(session.agent, day_of(at), shard),
        "sk": f"{session.tenant}#{session.session_id}",
        "kind": "gated",
        "session_id": session.session_id,
    }
    ttl = ttl_at(session.expires_at)
    if ttl is not None:
        item["ttl"] = ttl
    return item


def next_due(item: PendingItem) -> float:
    """When the sweep must look at a waiting item next: the earliest of its expiry,
    its next escalation step (or the ladder's final ``then``) and its next reminder."""
    times = [item.expires_at]
    ladder = item.policy.escalate if item.policy is not None else ()
    if item.escalation_step < len(ladder):
        times.append(item.requested_at + ladder[item.escalation_step].after)
    elif ladder and ladder[-1].then is not None:
        # every step taken but the final decision not yet: a sweep died between them
        times.append(item.requested_at + ladder[-1].after)
    if item.remind_after is not None:
        since = item.reminded_at if item.reminded_at is not None else item.requested_at
        times.append(since + item.remind_after)
    return min(times)


# --- TTL and size --------------------------------------------------------------------------


def ttl_at(when: float | None) -> int | None:
    """The ``ttl`` attribute for a record kept until ``when`` (None: kept for good)."""
    # Rounded up: an item is kept at least until the moment its record names.
    return None if when is None else math.ceil(when)


def ttl_of(record: Record) -> int | None:
    """Epoch seconds after which the store may drop the record, if ever."""
    if is_session(record) or is_chunk(record):
        return ttl_at(record.expires_at)
    if isinstance(record, PendingItem | OutboxRow):
        return ttl_at(record.retain_until)
    return None


def _value_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bytes):
        return len(value)
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
    if is_session(record):
        return f"sessions/{record.session_id}/state/{unique}"
    if is_chunk(record):
        return f"sessions/{record.session_id}/chunks/{record.seq:010d}-{unique}"
    if isinstance(record, PendingItem):
        return f"pending/{record.id}/{unique}"
    if isinstance(record, OutboxRow):
        return f"pending/{record.pending_id}/outbox/{record.channel}-{unique}"
    if isinstance(record, AuditEntry):
        return f"audit/{record.subject}/{record.id}-{unique}"
    if isinstance(record, ApiKey):
        return f"api-keys/{record.key_id}-{unique}"
    raise TypeError(f"the store keeps no {type(record).__name__}")


class Codec:
    """Turns records into item dicts and back, moving large bodies to ``blobs``, and
    places each record in the indexes (its sharded keys, ``shards``)."""

    def __init__(
        self,
        blobs: Blobs | None,
        *,
        offload_at: int = OFFLOAD_AT,
        shards: Shards | None = None,
    ) -> None:
        # None: a store without a bucket (``signoff keys`` needs only the table);
        # a record too large for one item is then refused, not silently truncated.
        self.blobs = blobs
        self.offload_at = offload_at
        self.shards = shards or Shards()

    # -- index keys ---------------------------------------------------------------------

    def _sweep(self, family: str, of: str, at: float, *, shard_by: str | None = None) -> Item:
        shard = shard_of(shard_by or of, self.shards.sweep)
        return {"gsi5pk": sweep_partition(family, shard), "gsi5sk": time_key(at, of)}

    def due_key(self, pending_id: str, at: float) -> Item:
        """A pending item's place in the sweep index: due at ``at``."""
        return self._sweep(DUE, pending_id, at)

    def owed_key(self, pending_id: str, resolved_at: float) -> Item:
        """A resolved item's place until its turn is resumed: the sweep resumes the
        turn ``RESUME_GRACE`` after the resolution if nobody did."""
        return self.due_key(pending_id, resolved_at + RESUME_GRACE)

    def lease_key(self, session_id: str, at: float) -> Item:
        """A running session's place in the sweep index: when its lease first runs out."""
        return self._sweep(LEASES, session_id, at)

    def outbox_place(self, subject: str, channel: str, *, state: str, at: float) -> Item:
        """An outbox row's place in the sweep index.

        ``state`` is ``unsent`` (by ``at``: its creation, or when it was made sendable
        again), ``retry`` (by ``at``: its ``retry_at``) or ``failed`` (by ``at``: when
        it was given up). A sent row has no place.
        """
        family = {"unsent": SENDS, "retry": RETRIES}.get(state, FAILED)
        # a subject's rows share a shard: one task enqueues the subject once for all
        return self._sweep(family, f"{subject}#{channel}", at, shard_by=subject)

    def tenant_shard(self, record_id: str) -> int:
        """The shard of a tenant's by-tenant partitions that ``record_id`` lives in."""
        return shard_of(record_id, self.shards.listing)

    def _tenant_attrs(self, record: Record) -> Item:
        """A record's place in the ``by-tenant`` index, if it has one."""
        if isinstance(record, PendingItem) and record.status == "pending":
            partition = tenant_pending(record.tenant, self.tenant_shard(record.id))
            return {"gsi4pk": partition, "gsi4sk": time_key(record.requested_at, record.id)}
        # Rule decisions stay out: one per tool call, they would bury the people's.
        if isinstance(record, AuditEntry) and record.tenant is not None and record.kind != "rule":
            partition = tenant_audit(record.tenant, self.tenant_shard(record.id))
            return {"gsi4pk": partition, "gsi4sk": time_key(record.at, record.id)}
        return {}

    def index_attrs(self, record: Record) -> Item:
        """A record's place in the sweep index, if it has one."""
        if isinstance(record, PendingItem):
            if record.status == "pending":
                return self.due_key(record.id, next_due(record))
            if not record.resumed:
                resolved = record.resolved_at if record.resolved_at is not None else 0.0
                return self.owed_key(record.id, resolved)
            return {}
        if isinstance(record, OutboxRow) and record.notified_at is None:
            subject, channel = record.pending_id, record.channel
            if not record.failed:
                return self.outbox_place(subject, channel, state="unsent", at=record.created_at)
            if record.retry_at is not None:
                return self.outbox_place(subject, channel, state="retry", at=record.retry_at)
            return self.outbox_place(subject, channel, state="failed", at=record.created_at)
        if is_session(record) and record.status == "running" and record.state:
            # Only a turn with a checkpoint can be continued. One that yielded
            # (Continue) holds no lease: it stalls from the moment it stopped, unless
            # its continuation claims it first. A lease extended by a commit keeps the
            # key its claim gave it (``lease_key_at``): the index is not rewritten.
            if record.lease_until is None:
                since = record.updated_at
            elif record.lease_key_at is not None:
                since = record.lease_key_at
            else:
                since = record.lease_until
            return self.lease_key(record.session_id, since)
        return {}

    # -- records ------------------------------------------------------------------------

    def _offload_at(self, record: Record) -> int:
        # A pending item is read by every sweep and decision of it: its tool
        # arguments go to the bucket beyond a few KB, so its reads stay one unit.
        if isinstance(record, PendingItem) and self.blobs is not None:
            return min(self.offload_at, PENDING_OFFLOAD_AT)
        return self.offload_at

    def encode(self, record: Record) -> Item:
        """The item for ``record``; a body too large for one item goes to Blobs.

        Raises:
            UsageError: the item would exceed DynamoDB's limit even without its body.
        """
        pk, sk = key_of(record)
        live = LIVE[record.item_kind]
        item: Item = {"pk": pk, "sk": sk, "kind": record.item_kind}
        for name in live:
            value = getattr(record, name)
            if name in JSON_LIVE:
                # a list of records: one JSON string, read and written whole
                value = votes_json(value) if value else None
            if value is not None:
                item[name] = value
        item.update(self.index_attrs(record))
        item.update(self._tenant_attrs(record))
        ttl = ttl_of(record)
        if ttl is not None:
            item["ttl"] = ttl
        body = record.model_dump_json(exclude=set(live))
        if len(body) > COMPRESS_AT:
            item["zbody"] = packing.pack(body)
        else:
            item["body"] = body
        if item_size(item) > self._offload_at(record):
            # Written before the item: a refused write leaves only an orphan
            # blob, which the bucket's lifecycle rule removes.
            if self.blobs is None:
                raise UsageError(
                    f"a {type(record).__name__} of {item_size(item)} bytes needs the bucket "
                    "for large values, and SIGNOFF_BUCKET is not set"
                )
            key = _blob_key(record)
            self.blobs.put(key, body.encode())
            item.pop("zbody", None)
            item["body"] = BLOB_PREFIX + key
        check_size(item)
        return item

    def decode(self, item: Item, model: type[R]) -> R:
        """The record an item holds, its body read back from Blobs when it was moved."""
        packed = item.get("zbody")
        body: str = packing.unpack(packed) if packed is not None else item["body"]
        if packed is None and body.startswith(BLOB_PREFIX):
            if self.blobs is None:
                raise UsageError(
                    f"{item['pk']} keeps its body in the bucket, and SIGNOFF_BUCKET is not set"
                )
            body = self.blobs.get(body.removeprefix(BLOB_PREFIX)).decode()
        live = [name for name in LIVE[model.item_kind] if name in item]
        if not live:
            # a log chunk, the records read most: parsed and validated in one pass
            return model.model_validate_json(body)
        data = json.loads(body)
        for name in live:
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
