"""One cap on running turns: a turn executes only while it holds a run slot.

Every entry point of ``Turns`` that runs a turn — a message, a resume (an API
decision, a link, a chat click's continuation, the sweeper's expiry), a
continuation and the sweeper's re-drive — holds a slot of the deployment (at
most ``RunCap.runs`` at once) and, with ``RunCap.per_tenant``, one of its
tenant's while the engine runs. Slots are leases in the table
(``signoff.store.slots``): a turn whose process dies frees its slot when the
lease runs out, like its session's.

A turn that finds every slot taken waits, polling, at most ``RunCap.wait``
seconds and never more than half the time its invocation has left; then it is
deferred, never dropped: ``Turns`` keeps what it was given (a message is
committed, a decision stands) and leaves the session ``running`` and due, so a
continuation or the sweeper runs it once a slot is free.
"""

from __future__ import annotations

import logging
import random
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from signoff.durable.results import TurnResult
from signoff.errors import SignoffError
from signoff.ids import new_id

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from signoff.clock import Clock
    from signoff.store.base import Slots, TurnSessions
    from signoff.store.session_records import SessionRecord

__all__ = ["DEPLOYMENT", "RunCap", "RunSlots", "defer"]

log = logging.getLogger(__name__)

# The scope every turn counts in; a tenant's is ``tenant#<tenant>``.
DEPLOYMENT = "all"
# Seconds between a waiting turn's reads of the slots: soon at first, then at
# most once a second each, so many waiting turns do not load the table.
_FIRST_POLL, _LAST_POLL = 0.05, 1.0


@dataclass(frozen=True)
class RunCap:
    """How many turns execute at once (0: no cap) and how long one waits for its turn.

    ``runs`` counts every turn of the deployment, ``per_tenant`` each tenant's
    (both apply when both are set); ``wait`` is in seconds.
    """

    runs: int = 0
    per_tenant: int = 0
    wait: float = 10.0

    @property
    def capped(self) -> bool:
        return self.runs > 0 or self.per_tenant > 0


class RunSlots:
    """Takes the slots a turn needs, waiting a bounded time, and gives them back."""

    def __init__(
        self,
        slots: Slots | None,
        cap: RunCap,
        *,
        clock: Clock,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if cap.capped and slots is None:
            raise ValueError("a run cap needs a store of slots")
        self.slots = slots
        self.cap = cap
        self.clock = clock
        self._sleep = sleep

    @contextmanager
    def hold(self, tenant: str, *, lease: float, deadline: float | None) -> Iterator[bool]:
        """Hold a slot (and the tenant's) for the block: True, or False when none came in time.

        ``lease`` bounds how long a slot outlives a process that died holding it;
        ``deadline`` (monotonic) is the invocation's, which the wait keeps clear of.
        """
        taken = self._take(tenant, lease, deadline)
        try:
            yield taken is not None
        finally:
            if taken:
                self._give_back(taken)

    def _scopes(self, tenant: str) -> list[tuple[str, int]]:
        scopes = [(f"tenant#{tenant}", self.cap.per_tenant), (DEPLOYMENT, self.cap.runs)]
        return [(scope, size) for scope, size in scopes if size > 0]

    def _take(
        self, tenant: str, lease: float, deadline: float | None
    ) -> list[tuple[str, str, str]] | None:
        """The (scope, slot, holder) taken, in order; None when the wait ran out first."""
        scopes = self._scopes(tenant)
        if not scopes:
            return []
        start = self.clock.monotonic()
        wait = self.cap.wait
        if deadline is not None:
            # half the time left at most: the turn itself needs the rest
            wait = max(0.0, min(wait, (deadline - start) / 2))
        pause = _FIRST_POLL
        while True:
            taken = self._take_once(scopes, lease)
            if taken is not None:
                return taken
            left = start + wait - self.clock.monotonic()
            if left <= 0:
                log.info(
                    "no run slot free within %.1f s: the turn is deferred",
                    wait,
                    extra={"tenant": tenant, "max_concurrent_runs": self.cap.runs},
                )
                return None
            # jittered, growing: waiting turns do not poll in step
            self._sleep(min(left, random.uniform(pause / 2, pause)))
            pause = min(pause * 2, _LAST_POLL)

    def _take_once(
        self, scopes: list[tuple[str, int]], lease: float
    ) -> list[tuple[str, str, str]] | None:
        assert self.slots is not None  # capped: checked in __init__
        now = self.clock.now().timestamp()
        taken: list[tuple[str, str, str]] = []
        for scope, size in scopes:
            holder = new_id()
            slot = self.slots.take(scope, size, holder=holder, until=now + lease, now=now)
            if slot is None:
                # the tenant's slot is no use without the deployment's: free it for others
                self._give_back(taken)
                return None
            taken.append((scope, slot, holder))
        return taken

    def _give_back(self, taken: list[tuple[str, str, str]]) -> None:
        assert self.slots is not None
        for scope, slot, holder in taken:
            try:
                self.slots.give_back(scope, slot, holder=holder)
            except SignoffError:
                # the turn's outcome stands; the slot frees itself when its lease runs out
                log.warning("could not give back run slot %s/%s", scope, slot, exc_info=True)


def defer(sessions: TurnSessions, record: SessionRecord, owner: str, clock: Clock) -> TurnResult:
    """Give a session ``owner`` claimed back due now: its turn waits for a slot, not a person.

    The session stays ``running`` with its checkpoint (a resume's still awaits the
    decided call, which a re-drive applies) and a lease that has run out, so the
    next continuation claims it at once and the sweeper re-drives it.
    """
    now = clock.now().timestamp()
    sessions.claim(record, purpose="redrive", owner=owner, until=now, now=now)
    return TurnResult(status="running", session_id=record.session_id, agent=record.agent)
