"""Where a waiting item stands on its escalation ladder (``ApprovalPolicy.escalate``).

The sweeper takes the steps (``signoff.durable.escalation``); this module reads
them off the item for everything that shows or checks them: the decision card
("Escalated to slack-leads 2 hours ago (step 1 of 3)"), the status route, and
the decision path, for which a channel a step notified counts as one the item
was sent to (``signoff.durable.decide.not_sent_to``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.approver.card import Escalation

if TYPE_CHECKING:
    from signoff.gate.policy import EscalationStep
    from signoff.store.pending_records import PendingItem

__all__ = ["escalated_to", "escalation_of", "next_step"]


def _ladder(item: PendingItem) -> tuple[EscalationStep, ...]:
    return item.policy.escalate if item.policy is not None else ()


def escalated_to(item: PendingItem) -> tuple[str, ...]:
    """The channels the steps taken so far notified, in order, each once.

    Only taken steps count (``escalation_step``, moved by one conditional write
    after the step's outbox rows were written): a channel of a step still to
    come was sent nothing, so it decides nothing yet.
    """
    seen: dict[str, None] = {}
    for step in _ladder(item)[: item.escalation_step]:
        seen.update(dict.fromkeys(step.notify))
    return tuple(seen)


def escalation_of(item: PendingItem) -> Escalation | None:
    """Where ``item`` stands, or None when it has no ladder or took no step yet."""
    ladder = _ladder(item)
    taken = min(item.escalation_step, len(ladder))
    if not taken:
        return None
    return Escalation(
        step=taken,
        steps=len(ladder),
        at=item.escalated_at,
        to=ladder[taken - 1].notify,
        asked=escalated_to(item),
    )


def next_step(item: PendingItem) -> EscalationStep | None:
    """The step ``item`` takes next, or None when it has no ladder or took every step."""
    ladder = _ladder(item)
    return ladder[item.escalation_step] if item.escalation_step < len(ladder) else None
