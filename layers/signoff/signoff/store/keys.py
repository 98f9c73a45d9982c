"""Where every record lives: the table's keys, the indexes and their sharded partitions.

Every store adapter builds its keys here, so the memory table and DynamoDB put a
record in the same place (docs/scale.md, "Shards" and "The sweep index")::

    S#<session>      META                  the session
                     L#<seq, 16 digits>    its log, one chunk per commit
    P#<pending>      META                  a pending item
                     O#<channel>           its outbox rows, one per channel
    A#<subject>      <at>#<entry id>       audit entries of people, expiry, refusals
    AR#<subject>     <at>#<entry id>       a gate rule's decisions, one per tool call
    K#<key hash>     META                  an API key, by what a request carries
    KID#<key id>     META                  the same key, by its public id
    KEYS             <tenant>#<key id>     the listing of API keys
    G#<agent>#<day>  <tenant>#<session>    sessions with a gated call that day (UTC)

and in the indexes, ``by-tenant`` (``T#<tenant>#PENDING``, ``T#<tenant>#AUDIT``, by
time) and ``sweep`` (``DUE``, ``LEASE``, ``SEND``, ``RETRY``, ``FAILED``, by when
each is due).

Every partition on a path each turn takes is sharded (``Shards``): shard 0 of a
partition is its unsharded name, so the previous release's by-tenant and
gated-sessions items, which used that name, are read as shard 0 and ``signoff
migrate`` need not move them; items written under a smaller count are still read.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final, TypeGuard

from signoff.store.pending_records import OutboxRow, PendingItem
from signoff.store.records import ApiKey, AuditEntry
from signoff.store.table import Index, Key

if TYPE_CHECKING:
    from signoff.store.records import Record
    from signoff.store.session_records import LogChunk, SessionRecord

__all__ = [
    "DUE",
    "FAILED",
    "LEASES",
    "LEASE_INDEX",
    "LEGACY_KEYS",
    "LEGACY_PARTITIONS",
    "PENDING_INDEX",
    "RETRIES",
    "SENDS",
    "SWEEP_INDEX",
    "SWEEP_KEYS",
    "TABLE_KEY",
    "TENANT_INDEX",
    "TENANT_KEYS",
    "UNSENT_INDEX",
    "Shards",
    "api_key_id_key",
    "api_key_key",
    "api_key_listing",
    "api_key_listing_key",
    "audit_key",
    "chunk_key",
    "chunk_range",
    "day_of",
    "due_by",
    "gated_days",
    "gated_partition",
    "is_chunk",
    "is_session",
    "key_of",
    "outbox_key",
    "outbox_prefix",
    "pending_key",
    "session_key",
    "shard_of",
    "sharded",
    "sweep_partition",
    "tenant_audit",
    "tenant_pending",
    "time_key",
]

TABLE_KEY: Final = Index(None, "pk", "sk")
TENANT_INDEX: Final = Index("by-tenant", "gsi4pk", "gsi4sk")
# What every sweep reads: keys only, so a write that leaves an item's due time
# alone (a lock, a receipt, a vote, a lease extension) writes nothing to it.
SWEEP_INDEX: Final = Index("sweep", "gsi5pk", "gsi5sk")
# The previous release's sweep indexes: read only to move what they still hold.
PENDING_INDEX: Final = Index("pending-by-expiry", "gsi1pk", "gsi1sk")
UNSENT_INDEX: Final = Index("outbox-unsent", "gsi2pk", "gsi2sk")
LEASE_INDEX: Final = Index("leases-by-expiry", "gsi3pk", "gsi3sk")
LEGACY_PARTITIONS: Final = (
    (PENDING_INDEX, "PENDING"),
    (UNSENT_INDEX, "UNSENT"),
    (UNSENT_INDEX, "RETRY"),
    (UNSENT_INDEX, "FAILED"),
    (LEASE_INDEX, "RUNNING"),
)
LEGACY_KEYS: Final = ("gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "gsi3pk", "gsi3sk")
SWEEP_KEYS: Final = ("gsi5pk", "gsi5sk")
TENANT_KEYS: Final = ("gsi4pk", "gsi4sk")
# The sweep index's partition families (each ``<family>#<shard>``, shard 0 bare).
DUE: Final = "DUE"  # pending items, by their next due time
LEASES: Final = "LEASE"  # sessions running from a checkpoint, by lease
SENDS: Final = "SEND"  # outbox rows never sent, by creation
RETRIES: Final = "RETRY"  # failed rows with a slow retry, by retry_at
FAILED: Final = "FAILED"  # failed for good, by when (``signoff outbox list --failed``)
_KEYS_PARTITION: Final = "KEYS"
_LOG_END: Final = 9_999_999_999_999_999


@dataclass(frozen=True)
class Shards:
    """How many partitions each sharded family is spread over (docs/scale.md).

    ``sweep``: each family of the sweep index, and an agent's daily gated-sessions
    listing (one agent may take every turn); ``listing``: a tenant's by-tenant
    partitions. Raise them on a live
    table, never lower them: readers read every shard below the current count.
    """

    sweep: int = 12
    listing: int = 4

    def __post_init__(self) -> None:
        if self.sweep < 1 or self.listing < 1:
            raise ValueError(f"shard counts must be at least 1: {self}")


def shard_of(value: str, count: int) -> int:
    """The shard of ``value`` among ``count``: stable across processes and releases."""
    return zlib.crc32(value.encode()) % count


def sharded(base: str, shard: int) -> str:
    """Partition ``base``'s shard ``shard``; shard 0 is ``base`` itself, so the
    previous release's unsharded items are read as its shard 0 without a migration."""
    return base if shard == 0 else f"{base}#{shard}"


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


def gated_partition(agent: str, day: str, shard: int = 0) -> str:
    """Shard ``shard`` of the partition listing the sessions of ``agent`` with a call
    gated on ``day``."""
    return sharded(f"G#{agent}#{day}", shard)


def day_of(at: float) -> str:
    """The UTC day of ``at``, as the gated-sessions listing names it."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")


def gated_days(since: float, until: float) -> list[str]:
    """The UTC days from ``since``'s to ``until``'s, oldest first."""
    first = datetime.fromtimestamp(since, UTC).date()
    last = datetime.fromtimestamp(until, UTC).date()
    return [str(first + timedelta(days=n)) for n in range((last - first).days + 1)]


# Which kind a record is, asked of its ``item_kind``: the notifier's path never holds a
# session, and must not import the session records (and the engine's state behind
# them) only to ask ``isinstance``.
def is_session(record: Record) -> TypeGuard[SessionRecord]:
    """Whether ``record`` is a session."""
    return record.item_kind == "session"


def is_chunk(record: Record) -> TypeGuard[LogChunk]:
    """Whether ``record`` is a session's log chunk."""
    return record.item_kind == "chunk"


def key_of(record: Record) -> Key:
    """The key a record is stored under."""
    if is_session(record):
        return session_key(record.session_id)
    if is_chunk(record):
        return chunk_key(record.session_id, record.seq)
    if isinstance(record, PendingItem):
        return pending_key(record.id)
    if isinstance(record, OutboxRow):
        return outbox_key(record.pending_id, record.channel)
    if isinstance(record, AuditEntry):
        return audit_key(record.subject, record.at, record.id, rule=record.kind == "rule")
    if isinstance(record, ApiKey):
        return api_key_key(record.key_hash)
    raise TypeError(f"the store keeps no {type(record).__name__}")


def time_key(at: float, record_id: str = "") -> str:
    """A sort key that orders by time, then id: ``<at zero-padded>#<id>``."""
    return f"{at:020.6f}#{record_id}"


def due_by(now: float) -> str:
    """The exclusive upper sort key of a sweep partition's entries due at ``now``."""
    # "$" sorts right after "#", so every "<now>#<id>" key is below the bound.
    return f"{now:020.6f}$"


def sweep_partition(family: str, shard: int) -> str:
    """Shard ``shard`` of one of the sweep index's families (``DUE``, ``LEASE``, …)."""
    return sharded(family, shard)


def tenant_pending(tenant: str, shard: int = 0) -> str:
    """Shard ``shard`` of the ``by-tenant`` partition of a tenant's items still pending."""
    return sharded(f"T#{tenant}#PENDING", shard)


def tenant_audit(tenant: str, shard: int = 0) -> str:
    """Shard ``shard`` of the ``by-tenant`` partition of a tenant's audit entries
    (no rule decisions)."""
    return sharded(f"T#{tenant}#AUDIT", shard)
