"""Shard counts raised on a live table: what was written under the old counts is still read.

Given items written by a store with the default shard counts (and items of the
release before shards, in shard 0's unsharded partitions), when the deployment
raises both counts tenfold, then every reader — the sweep's tasks, a tenant's
inbox and audit, an agent's gated-sessions listing — still finds every one of them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from signoff.clock import ManualClock
from signoff.store.audit import TableAudit
from signoff.store.codec import Codec
from signoff.store.keys import Shards
from signoff.store.memory import MemoryBlobs, MemoryTable
from signoff.store.outbox import TableOutbox
from signoff.store.pending import TablePendingItems
from signoff.store.pending_records import OutboxRow
from signoff.store.records import AuditEntry
from signoff.store.session_records import Commit, LogChunk, SessionRecord
from signoff.store.sessions import TableSessions
from tests.support.builders import T0, pending_approval

BEFORE, AFTER = Shards(sweep=12, listing=4), Shards(sweep=120, listing=40)


class Ports:
    """The store's ports over one shared table, with a codec of the given counts."""

    def __init__(self, table: MemoryTable, blobs: MemoryBlobs, shards: Shards) -> None:
        clock = ManualClock(datetime.fromtimestamp(T0, UTC))
        coder = Codec(blobs, shards=shards)

        def now() -> float:
            return clock.now().timestamp()

        self.shards = shards
        self.pending = TablePendingItems(table, coder, now=now)
        self.outbox = TableOutbox(table, coder, now=now)
        self.audit = TableAudit(table, coder, now=now)
        self.sessions = TableSessions(table, coder, now=now)
        self.coder = coder


def test_raising_the_shard_counts_tenfold_loses_nothing_written_before() -> None:
    table, blobs = MemoryTable(), MemoryBlobs()
    old = Ports(table, blobs, BEFORE)
    ids = [f"p{n}" for n in range(60)]
    for n, pending_id in enumerate(ids):
        item = pending_approval(pending_id, session_id=f"s{n}", expires_at=T0 + 60 + n)
        table.put(old.coder.encode(item))
        row = OutboxRow(
            pending_id=pending_id, channel="slack", run_id="run-1", kind="approval", created_at=T0
        )
        table.put(old.coder.encode(row))
        entry = AuditEntry(
            id=f"a{n}",
            subject=f"s{n}",
            at=T0 + n,
            kind="human",
            decision="approve",
            actor="alice",
            tenant="acme",
            agent="refunds",
        )
        table.put(old.coder.encode(entry))
    fresh = SessionRecord(
        session_id="s-gated", agent="refunds", tenant="acme", environment="production"
    )
    session = old.sessions.claim(
        fresh,
        purpose="message",
        owner="w",
        until=T0 + 900,
        now=T0,
    )
    chunk = LogChunk(
        session_id="s-gated",
        seq=0,
        run_id="run-1",
        events=[{"type": "actauth:decision", "decision": "ask"}],
        at=T0,
    )
    old.sessions.commit(Commit(session=session, chunk=chunk, release=True), owner="w")

    new = Ports(table, blobs, AFTER)
    later = T0 + 3600

    due = {item.id for shard in range(AFTER.sweep) for item in new.pending.due_in(shard, later)}
    assert due == set(ids)
    assert {item.id for item in new.pending.of_tenant("acme", T0)} == set(ids)
    unsent = {
        row.pending_id for shard in range(AFTER.sweep) for row in new.outbox.unsent_in(shard, later)
    }
    assert unsent == set(ids)
    audit = new.audit.of_tenant("acme", since=T0 - 1, until=later)
    assert {entry.id for entry in audit} == {f"a{n}" for n in range(60)}
    gated = new.sessions.gated("refunds", since=T0, until=T0)
    assert [record.session_id for record in gated] == ["s-gated"]
