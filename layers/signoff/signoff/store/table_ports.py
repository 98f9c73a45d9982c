"""Every store port over one ``Table``, each built on its first use.

``MemoryStore`` and ``DynamoStore`` supply the table, the codec and the clock;
the port classes are imported only when a caller asks for their port, so a
function wired with two of them (the notifier: pending items and the outbox)
loads neither the session records nor the engine's state behind them. Wiring
asks at cold start, so a port's module is loaded then, not on a first request.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.store.api_keys import TableApiKeys
    from signoff.store.audit import TableAudit
    from signoff.store.codec import Codec
    from signoff.store.keys import Shards
    from signoff.store.outbox import TableOutbox
    from signoff.store.pending import TablePendingItems
    from signoff.store.sessions import TableSessions
    from signoff.store.slots import TableSlots
    from signoff.store.table import Table

__all__ = ["TablePorts"]


class TablePorts:
    """The ports over ``table``: ``sessions``, ``pending``, ``outbox``, ``audit``,
    ``api_keys``, ``slots``; each over the table the store holds when it is first asked
    for (a bench may wrap the table before that)."""

    table: Table

    def __init__(self, coder: Codec, *, now: Callable[[], float]) -> None:
        self.codec = coder
        self.shards: Shards = coder.shards
        self.now = now

    @cached_property
    def sessions(self) -> TableSessions:
        from signoff.store.sessions import TableSessions

        return TableSessions(self.table, self.codec, now=self.now)

    @cached_property
    def pending(self) -> TablePendingItems:
        from signoff.store.pending import TablePendingItems

        return TablePendingItems(self.table, self.codec, now=self.now)

    @cached_property
    def outbox(self) -> TableOutbox:
        from signoff.store.outbox import TableOutbox

        return TableOutbox(self.table, self.codec, now=self.now)

    @cached_property
    def audit(self) -> TableAudit:
        from signoff.store.audit import TableAudit

        return TableAudit(self.table, self.codec, now=self.now)

    @cached_property
    def api_keys(self) -> TableApiKeys:
        from signoff.store.api_keys import TableApiKeys

        return TableApiKeys(self.table, self.codec, now=self.now)

    @cached_property
    def slots(self) -> TableSlots:
        from signoff.store.slots import TableSlots

        return TableSlots(self.table, self.codec, now=self.now)
