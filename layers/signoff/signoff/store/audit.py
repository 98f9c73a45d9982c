"""Audit entries over a ``Table``: who decided what, per session and per tenant.

A turn's rule decisions are read from its log, so this port reads log chunks;
it lives apart from the outbox, which the notifier uses without the session records.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from signoff.approver.actors import RULES
from signoff.store import keys
from signoff.store.records import AuditEntry
from signoff.store.session_records import LogChunk
from signoff.store.stored import Stored, rows
from signoff.store.table import Attr

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["TableAudit", "rule_entries"]


class TableAudit(Stored):
    """The ``Audit`` port: who decided what, per session."""

    def record(self, entries: list[AuditEntry]) -> None:
        """Append ``entries``."""
        for item in [self._codec.encode(entry) for entry in entries]:
            self._items.put(item)

    def for_subject(self, subject: str, *, rules: bool = True) -> list[AuditEntry]:
        """Every entry about one session, oldest first; ``rules=False``: without the
        gate's rule decisions, in one read of the other entries (entries stored
        before rules had a partition of their own may still be among them).

        A turn's rule decisions are read from its log (``rule_entries``): each step
        commits them as ``actauth:decision`` events, and writes nothing else for
        them. Rule entries recorded as items (the previous release's, or ``record``'s)
        are read from their partition beside them.
        """
        partitions = [keys.audit_key(subject, 0.0, "", rule=rule)[0] for rule in (False, rules)]
        entries = [
            entry
            for pk in dict.fromkeys(partitions)
            for entry in self._found(self._items.query(pk, index=keys.TABLE_KEY), AuditEntry)
        ]
        if rules:
            pk, low, high = keys.chunk_range(subject, 0)
            log = self._items.query(pk, Attr("sk").between(low, high), index=keys.TABLE_KEY)
            chunks = self._found(log, LogChunk)
            entries += [entry for chunk in chunks for entry in rule_entries(chunk)]
        # the partitions and the log, each in time order: one list in time order
        return sorted(entries, key=lambda entry: keys.audit_key(subject, entry.at, entry.id)[1])

    def of_tenant(
        self,
        tenant: str,
        *,
        since: float,
        until: float,
        before: tuple[float, str] | None = None,
    ) -> Iterator[AuditEntry]:
        """A tenant's entries with ``since <= at < until``, newest first, paged lazily.

        Rule decisions are left out. ``before`` is the ``(at, id)`` of the last entry
        a previous page showed: only older ones follow.
        """
        index = keys.TENANT_INDEX
        # "#" sorts below every id character, so "<until>#" bounds out entries at ``until``
        high = keys.time_key(*before) if before is not None else keys.time_key(until)
        sort = Attr(index.sk).between(keys.time_key(since), high)
        # the tenant's shards, merged into one list, newest first
        shards = [
            rows(self._items.query(partition, sort, index=index, descending=True))
            for partition in self._audit_partitions(tenant)
        ]
        merged = heapq.merge(*shards, key=lambda item: str(item[index.sk]), reverse=True)
        for entry in self._decoded(merged, AuditEntry):
            # BETWEEN is inclusive: the cursor's own entry came on the page before
            if before is None or (entry.at, entry.id) != before:
                yield entry

    def _audit_partitions(self, tenant: str) -> list[str]:
        return [keys.tenant_audit(tenant, shard) for shard in range(self._codec.shards.listing)]


def rule_entries(chunk: LogChunk) -> list[AuditEntry]:
    """The audit entries of the gate's rule decisions one log chunk holds, at the
    time the step was committed; an entry's id names its chunk and its place in it."""
    return [
        AuditEntry(
            id=f"{chunk.seq:016d}.{place:04d}",
            subject=chunk.session_id,
            at=chunk.at,
            kind="rule",
            decision=str(event.get("decision", "")),
            actor=RULES,
            tool=event.get("tool"),
            reason=str(event.get("reason", "")),
        )
        for place, event in enumerate(chunk.events)
        if event.get("type") == "actauth:decision"
    ]
