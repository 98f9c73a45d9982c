"""Sessions and their append-only logs over a ``Table``: the lease as conditional writes."""

from __future__ import annotations

import heapq
from itertools import islice
from typing import TYPE_CHECKING

from signoff.errors import LeaseLost
from signoff.store import codec, keys, rules
from signoff.store.session_records import LogChunk, SessionRecord
from signoff.store.signal import COMMITS
from signoff.store.stored import Stored, rows
from signoff.store.table import Attr, ConditionFailed, Put, Update

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.base import ClaimFor
    from signoff.store.session_records import Commit

__all__ = ["TableSessions"]


class TableSessions(Stored):
    """The ``Sessions`` port: sessions, their leases and their logs."""

    def load(self, session_id: str) -> SessionRecord | None:
        """The session, or None (also when its retention has passed)."""
        return self._read(self._items.get(keys.session_key(session_id)), SessionRecord)

    def claim(
        self,
        fresh: SessionRecord,
        *,
        purpose: ClaimFor,
        owner: str,
        until: float,
        now: float,
        pending_id: str | None = None,
    ) -> SessionRecord:
        """Take the session's lease; ``fresh`` is stored when the session is new.

        One conditional update per existing session; a message to a session that
        does not exist falls through to one conditional put of ``fresh``.

        Raises:
            SessionBusy: the session is not in the state ``purpose`` needs.
            NotFound: ``purpose`` is resume or redrive and there is no such session.
        """
        attrs = rules.claim_attrs(owner=owner, until=until, now=now)
        condition = rules.claimable(purpose, owner, now, pending_id)
        key = keys.session_key(fresh.session_id)
        # A resume or a re-drive continues a checkpoint: the session is swept from
        # now on. A message's turn has none until its first commit, which indexes it.
        indexed = {} if purpose == "message" else self._codec.lease_key(fresh.session_id, until)
        try:
            update = Update(key, attrs | indexed, keys.LEGACY_KEYS, condition)
            claimed = self._items.update(update)
            return self._codec.decode(claimed, SessionRecord)
        except ConditionFailed as failed:
            current = self._read(failed.item, SessionRecord, now)
            if purpose != "message" or current is not None:
                raise rules.claim_refusal(fresh.session_id, current) from failed
        created = self._codec.encode(fresh) | attrs
        try:
            self._items.put(created, condition=rules.absent(now))
        except ConditionFailed as raced:
            # another message created the session between our two writes
            current = self._read(raced.item, SessionRecord, now)
            raise rules.claim_refusal(fresh.session_id, current) from raced
        return self._codec.decode(created, SessionRecord)

    def commit(self, commit: Commit, *, owner: str) -> SessionRecord:
        """Write ``commit`` in one transaction, if ``owner`` still holds the lease.

        Raises:
            LeaseLost: another owner holds the lease now, or wrote this step already.
        """
        session = rules.committed_session(commit, owner)
        listed: Put | None = None
        if commit.chunk is not None and _gates(commit.chunk):
            day = keys.day_of(commit.chunk.at)
            if session.gated_day != day:
                # the agent's day lists the session, once a day: what a replay of rule
                # changes reads (sharded like the sweep: one agent may take every turn)
                shards = self._codec.shards.sweep
                listed = Put(codec.gated_entry(session, commit.chunk.at, shards))
                session = session.model_copy(update={"gated_day": day})
        # what the step adds is new: a second writer of the same chunk lost the race
        fresh = rules.absent(self._now())
        writes = [Put(self._codec.encode(session), rules.owned(owner))]
        writes += [
            Put(self._codec.encode(record), fresh)
            for record in (commit.chunk, commit.pending)
            if record is not None
        ]
        writes += [Put(self._codec.encode(row)) for row in commit.outbox]
        if listed is not None:
            writes.append(listed)
        try:
            self._items.transact(writes)
        except ConditionFailed as refused:
            raise LeaseLost(session.session_id) from refused
        COMMITS.committed(session.session_id)
        return session

    def stalled(self, before: float, *, limit: int = 100) -> list[SessionRecord]:
        """Running sessions whose lease ran out by ``before``, longest stalled first
        (every shard, and what the previous release's lease index still lists)."""
        upper = keys.due_by(before)
        shards = [self.stalled_in(shard, before) for shard in self._shards()]
        legacy = self._decoded(
            self._legacy(keys.LEASE_INDEX, "RUNNING", upper), SessionRecord, rules.stalled(before)
        )
        merged = heapq.merge(*shards, legacy, key=_stalled_since)
        return list(islice((record for record in merged if record.state is not None), limit))

    def stalled_in(self, shard: int, before: float) -> Iterator[SessionRecord]:
        """One shard's running sessions whose lease ran out by ``before``, longest
        stalled first, read lazily (a sweep's ``stalled`` task)."""
        upper = keys.due_by(before)
        found = self._decoded(
            self._swept(keys.LEASES, shard, upper), SessionRecord, rules.stalled(before)
        )
        # only a turn with a checkpoint can be continued
        return (record for record in found if record.state is not None)

    def gated(
        self, agent: str, *, since: float, until: float, tenant: str | None = None
    ) -> Iterator[SessionRecord]:
        """Sessions of ``agent`` (of ``tenant`` only, if given) with a call gated on a
        day from ``since``'s to ``until``'s (UTC), each once, by day, tenant and id."""
        seen: set[str] = set()
        prefix = Attr("sk").begins_with(f"{tenant}#") if tenant is not None else None
        for day in keys.gated_days(since, until):
            # the day's shards merged into one listing by tenant and id
            shards = [
                rows(self._items.query(partition, prefix, index=keys.TABLE_KEY))
                for partition in self._gated_partitions(agent, day)
            ]
            for item in heapq.merge(*shards, key=lambda item: str(item["sk"])):
                session_id = item["session_id"]
                if session_id in seen or not rules.live(self._now()).holds(item):
                    continue
                seen.add(session_id)
                record = self.load(session_id)
                if record is not None:
                    yield record

    def _gated_partitions(self, agent: str, day: str) -> list[str]:
        return [
            keys.gated_partition(agent, day, shard) for shard in range(self._codec.shards.sweep)
        ]

    def read_log(self, session_id: str, *, from_seq: int = 0) -> Iterator[LogChunk]:
        """The session's log chunks from ``from_seq`` on, in order, paging as it goes."""
        pk, low, high = keys.chunk_range(session_id, from_seq)
        pages = self._items.query(pk, Attr("sk").between(low, high), index=keys.TABLE_KEY)
        return self._found(pages, LogChunk)

    def read_log_back(self, session_id: str, *, from_seq: int, to_seq: int) -> Iterator[LogChunk]:
        """The chunks from ``to_seq`` down to ``from_seq``, newest first, a few per read."""
        pk, low, _ = keys.chunk_range(session_id, from_seq)
        high = keys.chunk_key(session_id, to_seq)[1]
        # a watcher wants the last chunk or two: small pages, not the whole log in one read
        pages = self._items.query(
            pk, Attr("sk").between(low, high), index=keys.TABLE_KEY, limit=2, descending=True
        )
        return self._found(pages, LogChunk)


def _stalled_since(record: SessionRecord) -> float:
    """When a session's turn stopped moving: the order ``stalled`` lists them in."""
    return record.lease_until if record.lease_until is not None else record.updated_at


def _gates(chunk: LogChunk) -> bool:
    """Whether the step decided a tool call by the rules (an ``actauth:decision``)."""
    return any(event.get("type") == "actauth:decision" for event in chunk.events)
