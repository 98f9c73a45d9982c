"""Pending items over a ``Table``: each resolution, and each vote on an item that
needs several, is one conditional update, in one transaction with its audit entry."""

from __future__ import annotations

import heapq
from itertools import chain
from typing import TYPE_CHECKING

from signoff.errors import NotFound, ResolutionError, StoreUnavailable, TransactionConflicted
from signoff.store import codec, keys, rules
from signoff.store.pending_records import PendingItem, Ruling
from signoff.store.stored import Stored, rows
from signoff.store.table import Attr, ConditionFailed, Item, Put, Update

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.pending_records import PendingStatus, Vote
    from signoff.store.records import AuditEntry
    from signoff.store.table import Condition

__all__ = ["TablePendingItems"]


class TablePendingItems(Stored):
    """Every pending-item port (``PendingItems``): approvals and questions waiting
    for a human."""

    def get(self, pending_id: str) -> PendingItem | None:
        """The item, or None (also when its retention has passed)."""
        return self._read(self._items.get(keys.pending_key(pending_id)), PendingItem)

    def resolve(self, pending_id: str, ruling: Ruling, *, audit: AuditEntry) -> PendingItem:
        """Move a pending item to ``ruling.status`` and record ``audit``, in one transaction.

        Raises:
            NotFound: no such item.
            AlreadyResolved: it left ``pending`` before; carries the current item.
            Expired: its time ran out (even if no sweep has marked it yet).
            UsageError: ``status="expired"`` before the item is due.
        """
        status, now = ruling.status, ruling.now
        attrs = rules.resolution_attrs(ruling)
        key = keys.pending_key(pending_id)
        # still swept until its turn is resumed (``mark_resumed``)
        attrs |= self._codec.owed_key(pending_id, now)
        change = Update(key, attrs, codec.RESOLUTION_REMOVES, rules.resolvable(status, now))
        self._transact(pending_id, change, audit, status, now)
        # a transaction returns no attributes: read the item back (strongly consistent)
        resolved = self._items.get(key)
        if resolved is None:
            raise StoreUnavailable(f"pending item {pending_id} vanished after its resolution")
        return self._codec.decode(resolved, PendingItem)

    def vote(
        self,
        item: PendingItem,
        vote: Vote,
        *,
        audit: AuditEntry,
        status: PendingStatus | None = None,
        retain_until: float | None = None,
    ) -> PendingItem | None:
        """Add ``vote`` to ``item`` (as its voter read it) with ``audit``, in one
        transaction; with ``status`` the same write resolves the item (the vote
        that reaches the quorum), by the voter. The item as this vote left it.

        None: another vote was written since the voter read ``item``: read it
        again and decide anew.

        Raises:
            NotFound: no such item.
            AlreadyResolved: it left ``pending`` before; carries the current item.
            Expired: its time ran out (even if no sweep has marked it yet).
            UsageError: the votes' notes are too long.
        """
        votes = [*item.votes, vote]
        attrs, removes = rules.vote_attrs(votes), tuple[str, ...]()
        resolution: Item = {}
        if status is not None:
            by_voter = Ruling(
                status=status,
                actor=vote.actor,
                channel=vote.channel,
                now=vote.at,
                note=vote.note,
                retain_until=retain_until,
            )
            resolution = rules.resolution_attrs(by_voter) | self._codec.owed_key(item.id, vote.at)
            removes = codec.RESOLUTION_REMOVES
        condition = rules.votable(len(item.votes), vote.at)
        change = Update(keys.pending_key(item.id), attrs | resolution, removes, condition)
        if not self._transact(item.id, change, audit, status or "approved", vote.at):
            return None
        # what this write set, not a read back: a later vote may have landed already
        fields = {
            name: value
            for name, value in resolution.items()
            if name != "ttl" and not name.startswith("gsi")
        }
        return item.model_copy(update={"votes": votes, "vote_count": len(votes)} | fields)

    def _transact(
        self, pending_id: str, change: Update, audit: AuditEntry, status: PendingStatus, now: float
    ) -> bool:
        """Apply ``change`` to the item with ``audit``, in one transaction.

        False: the item still waits for a human, so what refused ``change`` (a
        vote's) is its votes, changed since the voter read them.

        Raises:
            ResolutionError: the item still waits, but other requests' writes to it
                cancelled the transaction each time (a lost race: a 409, not a 503).
        """
        # each entry is new: a write never replaces an entry already stored
        entry = Put(self._codec.encode(audit), rules.absent(now))
        vote = "vote_count" in change.set_attrs
        # the whole transaction twice at most; the table tries each one a few times
        for _ in range(2):
            try:
                # one transaction: a decision is never stored without its audit entry,
                # and a refused condition writes neither
                self._items.transact([change, entry])
            except ConditionFailed as failed:
                if failed.write == 1:
                    # the entry's id is taken: ids are fresh, so this is a bug
                    raise StoreUnavailable(
                        f"audit entry {audit.id} exists; nothing written"
                    ) from failed
                # the item the condition saw, returned by the same call
                current = self._read(failed.item, PendingItem, now)
                refusal = rules.resolution_refusal(pending_id, current, status, now)
                if refusal is None:
                    if vote:
                        return False  # somebody voted first: the voter reads the votes again
                    # both rules read the same item, so this means they disagree: a bug
                    refusal = StoreUnavailable(f"pending item {pending_id} changed; retry")
                raise refusal from failed
            except TransactionConflicted as conflicted:
                # nothing was written, and another request was writing the item:
                # the answer is what it wrote (the resolution that won, say)
                current = self._read(self._items.get(change.key), PendingItem, now)
                refusal = rules.resolution_refusal(pending_id, current, status, now)
                if refusal is not None:
                    raise refusal from conflicted
                assert current is not None  # else a refusal: NotFound
                if vote and current.vote_count != change.set_attrs["vote_count"] - 1:
                    return False  # another vote came first: the voter reads the votes again
                # a reminder, say, or a write that failed: the same transaction once more
                lost = conflicted
            else:
                return True
        # a lost race, and the item still waits: the person's click is answered,
        # with what to do, never with an outage
        raise ResolutionError(
            f"pending item {pending_id} still waits, but other requests kept writing it; "
            "nothing was decided: decide again"
        ) from lost

    def mark_resumed(self, pending_id: str) -> None:
        """Record that the turn was resumed after the resolution.

        Raises:
            NotFound: no such item.
        """
        key = keys.pending_key(pending_id)
        # resumed: nothing is owed any more, so the sweep has no reason to read it
        removes = (*keys.SWEEP_KEYS, *keys.LEGACY_KEYS)
        condition = rules.live(self._now())
        try:
            self._items.update(Update(key, {"resumed": True}, removes, condition))
        except ConditionFailed as failed:
            raise NotFound("pending item", pending_id) from failed

    def due(self, now: float, *, limit: int = 100) -> list[PendingItem]:
        """Pending items whose ``expires_at`` has passed, oldest first (every shard,
        and what the previous release's index still lists); for operators and tests,
        a sweep reads one shard (``due_in``)."""
        upper = keys.due_by(now)
        swept = [self._swept(keys.DUE, shard, upper) for shard in self._shards()]
        legacy = self._legacy(keys.PENDING_INDEX, "PENDING", upper)
        found = self._decoded(chain(*swept, legacy), PendingItem, rules.due(now))
        return sorted(found, key=lambda item: (item.expires_at, item.id))[:limit]

    def due_in(self, shard: int, now: float) -> Iterator[PendingItem]:
        """One shard's items with something due by ``now`` (an expiry, an escalation
        step, a reminder, or a resolved item's turn still to resume), soonest due
        first, read lazily (a sweep's ``due`` task)."""
        return self._decoded(self._swept(keys.DUE, shard, keys.due_by(now)), PendingItem)

    def reindex(self, item: PendingItem) -> None:
        """Move the item's sweep key to what its state says (one conditional write that
        holds only while the item is as read): for an item whose key says due early."""
        attrs = self._codec.index_attrs(item)
        removes = () if attrs else keys.SWEEP_KEYS
        unchanged = (
            rules.live(self._now())
            & Attr("status").eq(item.status)
            & Attr("reminders").eq(item.reminders)
            & Attr("escalation_step").eq(item.escalation_step)
        )
        update = Update(keys.pending_key(item.id), attrs, (*removes, *keys.LEGACY_KEYS), unchanged)
        try:
            self._items.update(update)
        except ConditionFailed:
            return  # it moved since it was read: whoever moved it placed it

    def of_tenant(
        self, tenant: str, now: float, *, after: tuple[float, str] | None = None
    ) -> Iterator[PendingItem]:
        """A tenant's items waiting at ``now``, oldest request first, paged lazily.

        ``after`` is the ``(requested_at, id)`` of the last item a previous page showed.
        """
        index = keys.TENANT_INDEX
        sort = None if after is None else Attr(index.sk).gt(keys.time_key(*after))
        # the tenant's shards, merged into one list by request time
        shards = [
            rows(self._items.query(keys.tenant_pending(tenant, shard), sort, index=index))
            for shard in range(self._codec.shards.listing)
        ]
        merged = heapq.merge(*shards, key=lambda item: str(item[index.sk]))
        return self._decoded(merged, PendingItem, rules.waiting(now))

    def note_reminder(
        self, pending_id: str, count: int, *, now: float, item: PendingItem | None = None
    ) -> PendingItem | None:
        """Record reminder number ``count + 1``; None if it was recorded before or is moot.

        ``item``: the item as the caller read it (else it is read here), to move its
        sweep key to when it is next due.
        """
        attrs = rules.reminder_attrs(count, now)
        return self._count_once(pending_id, attrs, rules.remindable(count, now), item)

    def note_escalation(
        self, pending_id: str, step: int, *, now: float, item: PendingItem | None = None
    ) -> PendingItem | None:
        """Record escalation step ``step + 1``; None if it was recorded before or is moot."""
        attrs = rules.escalation_attrs(step, now)
        return self._count_once(pending_id, attrs, rules.escalatable(step, now), item)

    def _count_once(
        self, pending_id: str, attrs: Item, condition: Condition, item: PendingItem | None
    ) -> PendingItem | None:
        """One conditional update of a sweeper's count, moving the item's sweep key to
        its next due time; None when the condition fails."""
        read = item if item is not None else self.get(pending_id)
        if read is None:
            return None
        # the condition pins the count the key was computed from
        after = read.model_copy(update=attrs)
        attrs = attrs | self._codec.index_attrs(after)
        update = Update(keys.pending_key(pending_id), attrs, keys.LEGACY_KEYS, condition)
        try:
            updated = self._items.update(update)
        except ConditionFailed:
            return None  # another sweep moved it, or the item was resolved or fell due
        return self._codec.decode(updated, PendingItem)
