"""The sweeper (every minute): what was committed but never finished gets finished.

- Outbox rows committed but unsent after a grace period (the process died
  between the commit and the enqueue, or every retry so far failed) are
  enqueued again; the notifier's send lock makes a duplicate harmless.
- Pending items past ``expiresAt`` become ``expired`` (one conditional write,
  so two sweeps never expire one twice) and their turns resume as denied with
  the reason "expired".
- Items resolved but never resumed (the resolver died after its write) are
  resumed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from signoff.errors import AlreadyResolved, NotFound, SessionBusy, SignoffError
from signoff.ids import new_id
from signoff.store.records import AuditEntry

if TYPE_CHECKING:
    from signoff.clock import Clock
    from signoff.durable.turns import Turns
    from signoff.queue.base import Queue
    from signoff.store.base import Audit, Outbox, PendingItems

__all__ = ["SweepReport", "Sweeper"]

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class SweepReport:
    requeued: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)


class Sweeper:
    """One sweep over the store; safe to run twice at once."""

    def __init__(
        self,
        *,
        turns: Turns,
        pending: PendingItems,
        outbox: Outbox,
        audit: Audit,
        queue: Queue,
        clock: Clock,
        grace: float = 60.0,
        batch: int = 100,
    ) -> None:
        self.turns = turns
        self.pending = pending
        self.outbox = outbox
        self.audit = audit
        self.queue = queue
        self.clock = clock
        self.grace = grace
        self.batch = batch

    def sweep(self) -> SweepReport:
        report = SweepReport()
        self._requeue(report)
        self._expire(report)
        return report

    def _requeue(self, report: SweepReport) -> None:
        now = self.clock.now().timestamp()
        rows = self.outbox.unsent(created_before=now - self.grace, limit=self.batch)
        for pending_id in dict.fromkeys(row.pending_id for row in rows):
            item = self.pending.get(pending_id)
            if item is None:
                continue
            self.queue.send({"pendingId": pending_id, "sessionId": item.session_id})
            report.requeued.append(pending_id)

    def _expire(self, report: SweepReport) -> None:
        now = self.clock.now().timestamp()
        for item in self.pending.due(now, limit=self.batch):
            try:
                expired = self.pending.resolve(
                    item.id,
                    status="expired",
                    actor="sweeper",
                    channel="expiry",
                    now=now,
                    retain_until=now + self.turns.retention,
                )
            except (AlreadyResolved, NotFound):
                continue  # another sweep, or a last-second click, got there first
            self.audit.record(
                [
                    AuditEntry(
                        id=new_id(),
                        subject=expired.session_id,
                        at=now,
                        kind="expiry",
                        decision="expired",
                        actor="sweeper",
                        channel="expiry",
                        pending_id=expired.id,
                        tool=expired.tool,
                        reason="no decision before expiresAt",
                    )
                ]
            )
            report.expired.append(expired.id)
            try:
                self.turns.resume(expired)
            except (SessionBusy, SignoffError):
                log.warning("could not resume expired item %s yet", expired.id, exc_info=True)
                continue
            report.resumed.append(expired.id)
