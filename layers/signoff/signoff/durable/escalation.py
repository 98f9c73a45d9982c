"""Escalation: the sweeper climbs each waiting item's ladder (``ApprovalPolicy.escalate``).

A step is due when ``now >= requested_at + step.after``. Each step is taken once:

- a step that notifies writes its rows first, under the step's own subject
  (``escalate:<pendingId>:<n>``, so each channel's idempotency key is the step's),
  then moves the item's ``escalation_step`` from n-1 to n with one conditional
  write (``SweptPending.note_escalation``), then enqueues. Two sweeps write the
  same subject, so one message goes out per channel; a sweep that died between
  the writes is finished by the next (its rows are there: it only counts and
  enqueues). Enqueued after the count, the notifier composes the step's cards from
  an item whose step is taken: the channels it asks may decide it from then on
  (``signoff.durable.decide.not_sent_to``), and the messages sent before are
  redrawn to say so (``signoff.notify.hub``);
- the final ``then`` decides the item through ``Turns.escalate`` — one
  conditional write with its audit entry (kind ``escalation``), as the expiry's —
  and only its winner resumes the turn: denied with a reason the model reads, or
  approved (a rule's own ladder only) and the tool runs once. A click that wins
  the race leaves the sweep with ``AlreadyResolved``, and nothing more happens.

After downtime, every step that fell due is taken in order within one sweep, each
with its own messages, so the ladder ends (``then``) at the first sweep after its
time, never later because of steps still to take.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from signoff.approvals.escalation import next_step
from signoff.channels.subject import Subject
from signoff.errors import AlreadyResolved, Expired, NotFound, SignoffError
from signoff.notify import lifecycle

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.durable.results import Decided
    from signoff.durable.turns import Turns
    from signoff.gate.policy import EscalationStep
    from signoff.store.base import OutboxWriter, SweptPending
    from signoff.store.pending_records import PendingItem

__all__ = ["Climb", "Escalator"]

log = logging.getLogger(__name__)


class Climb:
    """What one item's climb did: the subjects of the steps it took, and its end, if it came."""

    def __init__(self, item: PendingItem) -> None:
        self.steps: list[str] = []
        self.decided: Decided | None = None
        # the item as the steps this climb took left it
        self.item = item


class Escalator:
    """Takes the due steps of waiting items' ladders; safe to run in two sweeps at once."""

    def __init__(
        self,
        *,
        turns: Turns,
        pending: SweptPending,
        outbox: OutboxWriter,
        enqueue: Callable[[Subject, str], None],
    ) -> None:
        self.turns = turns
        self.pending = pending
        self.outbox = outbox
        self.enqueue = enqueue

    def climb(self, item: PendingItem, now: float, *, deadline: float | None = None) -> Climb:
        """Take every step of ``item``'s ladder that is due at ``now``, in order."""
        climb = Climb(item)
        ladder = item.policy.escalate if item.policy is not None else ()
        while (step := next_step(item)) is not None and item.requested_at + step.after <= now:
            if step.notify:
                taken = self._notify(item, step, now, climb)
                if taken is None:
                    return climb  # another sweep took it (and goes on), or it was decided
                item = climb.item = taken
            if step.then is not None:
                climb.decided = self._end(item, step, deadline)
                return climb
        last = ladder[-1] if ladder else None
        if (
            last is not None
            and last.then is not None
            and item.escalation_step == len(ladder)
            and item.requested_at + last.after <= now
        ):
            # a final step that notifies too, counted by a sweep that died before deciding
            climb.decided = self._end(item, last, deadline)
        return climb

    def _notify(
        self, item: PendingItem, step: EscalationStep, now: float, climb: Climb
    ) -> PendingItem | None:
        number = item.escalation_step + 1
        rows = lifecycle.escalation_rows(
            item,
            number,
            step.notify,
            now=now,
            # kept as long as the item's own rows: until its retention after expiry
            retain_until=item.expires_at + self.turns.retention,
        )
        written = self.outbox.add(rows)
        taken = self.pending.note_escalation(item.id, item.escalation_step, now=now, item=item)
        if written or taken is not None:
            # whoever wrote the rows or counted the step sends; twice is harmless
            # (each row's send lock and notifiedAt)
            self.enqueue(Subject.escalate(item.id, number), item.session_id)
        if taken is not None:
            climb.steps.append(str(Subject.escalate(item.id, number)))
        return taken

    def _end(
        self, item: PendingItem, step: EscalationStep, deadline: float | None
    ) -> Decided | None:
        assert step.then is not None  # only a final step ends it
        try:
            return self.turns.escalate(item, step.then, after=step.after, deadline=deadline)
        except (AlreadyResolved, Expired, NotFound):
            return None  # a click, the expiry or another sweep got there first
        except SignoffError:
            log.warning("could not end the escalation of %s yet", item.id, exc_info=True)
            return None
