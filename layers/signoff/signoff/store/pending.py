"""Pending items over a ``Table``: each resolution, and each vote on an item that
needs several, is one conditional update, in one transaction with its audit entry."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from signoff.errors import NotFound, StoreUnavailable
from signoff.store import codec, rules
from signoff.store.records import PendingItem
from signoff.store.stored import Stored
from signoff.store.table import Attr, ConditionFailed, Item, Put, Update

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.records import AuditEntry, PendingStatus, Vote
    from signoff.store.table import Condition

__all__ = ["TablePendingItems"]


class TablePendingItems(Stored):
    """The ``PendingItems`` port: approvals and questions waiting for a human."""

    def get(self, pending_id: str) -> PendingItem | None:
        """The item, or None (also when its retention has passed)."""
        return self._read(self._items.get(codec.pending_key(pending_id)), PendingItem)

    def resolve(
        self,
        pending_id: str,
        *,
        status: PendingStatus,
        actor: str,
        channel: str,
        now: float,
        answer: str | None = None,
        note: str | None = None,
        retain_until: float | None = None,
        edited_args_json: str | None = None,
        audit: AuditEntry,
    ) -> PendingItem:
        """Move a pending item to ``status`` and record ``audit``, in one transaction.

        Raises:
            NotFound: no such item.
            AlreadyResolved: it left ``pending`` before; carries the current item.
            Expired: its time ran out (even if no sweep has marked it yet).
            UsageError: ``status="expired"`` before the item is due.
        """
        attrs = rules.resolution_attrs(
            status=status,
            actor=actor,
            channel=channel,
            now=now,
            answer=answer,
            note=note,
            retain_until=retain_until,
            edited_args_json=edited_args_json,
        )
        key = codec.pending_key(pending_id)
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
            resolution = rules.resolution_attrs(
                status=status,
                actor=vote.actor,
                channel=vote.channel,
                now=vote.at,
                answer=None,
                note=vote.note,
                retain_until=retain_until,
            )
            removes = codec.RESOLUTION_REMOVES
        condition = rules.votable(len(item.votes), vote.at)
        change = Update(codec.pending_key(item.id), attrs | resolution, removes, condition)
        if not self._transact(item.id, change, audit, status or "approved", vote.at):
            return None
        # what this write set, not a read back: a later vote may have landed already
        fields = {name: value for name, value in resolution.items() if name != "ttl"}
        return item.model_copy(update={"votes": votes, "vote_count": len(votes)} | fields)

    def _transact(
        self, pending_id: str, change: Update, audit: AuditEntry, status: PendingStatus, now: float
    ) -> bool:
        """Apply ``change`` to the item with ``audit``, in one transaction.

        False: the item still waits for a human, so what refused ``change`` (a
        vote's) is its votes, changed since the voter read them.
        """
        # each entry is new: a write never replaces an entry already stored
        entry = Put(self._codec.encode(audit), rules.absent(now))
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
                if "vote_count" in change.set_attrs:
                    return False  # somebody voted first: the voter reads the votes again
                # both rules read the same item, so this means they disagree: a bug
                refusal = StoreUnavailable(f"pending item {pending_id} changed; retry")
            raise refusal from failed
        return True

    def mark_resumed(self, pending_id: str) -> None:
        """Record that the turn was resumed after the resolution.

        Raises:
            NotFound: no such item.
        """
        key = codec.pending_key(pending_id)
        try:
            self._items.update(Update(key, {"resumed": True}, condition=rules.live(self._now())))
        except ConditionFailed as failed:
            raise NotFound("pending item", pending_id) from failed

    def due(self, now: float, *, limit: int = 100) -> list[PendingItem]:
        """Pending items whose ``expires_at`` has passed, oldest first."""
        partition, upper = codec.due_before(now)
        index = codec.PENDING_INDEX
        pages = self._items.query(partition, Attr(index.sk).lt(upper), index=index, limit=limit)
        return list(islice(self._found(pages, PendingItem, rules.due(now)), limit))

    def waiting(self, now: float) -> Iterator[PendingItem]:
        """Items still pending and not yet due at ``now``, soonest expiry first, paged lazily."""
        partition, lower = codec.waiting_after(now)
        index = codec.PENDING_INDEX
        pages = self._items.query(partition, Attr(index.sk).gt(lower), index=index)
        return self._found(pages, PendingItem, rules.waiting(now))

    def of_tenant(
        self, tenant: str, now: float, *, after: tuple[float, str] | None = None
    ) -> Iterator[PendingItem]:
        """A tenant's items waiting at ``now``, oldest request first, paged lazily.

        ``after`` is the ``(requested_at, id)`` of the last item a previous page showed.
        """
        index = codec.TENANT_INDEX
        sort = None if after is None else Attr(index.sk).gt(codec.time_key(*after))
        pages = self._items.query(codec.tenant_pending(tenant), sort, index=index)
        return self._found(pages, PendingItem, rules.waiting(now))

    def note_reminder(self, pending_id: str, count: int, *, now: float) -> PendingItem | None:
        """Record reminder number ``count + 1``; None if it was recorded before or is moot."""
        return self._count_once(
            pending_id, rules.reminder_attrs(count, now), rules.remindable(count, now)
        )

    def note_escalation(self, pending_id: str, step: int, *, now: float) -> PendingItem | None:
        """Record escalation step ``step + 1``; None if it was recorded before or is moot."""
        return self._count_once(
            pending_id, rules.escalation_attrs(step, now), rules.escalatable(step, now)
        )

    def _count_once(self, pending_id: str, attrs: Item, condition: Condition) -> PendingItem | None:
        """One conditional update of a sweeper's count; None when the condition fails."""
        update = Update(codec.pending_key(pending_id), attrs, condition=condition)
        try:
            updated = self._items.update(update)
        except ConditionFailed:
            return None  # another sweep moved it, or the item was resolved or fell due
        return self._codec.decode(updated, PendingItem)
