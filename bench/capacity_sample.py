"""``bench/capacity.py``'s sample: one second's turns paused, notified, swept over,
approved and finished over a metered store, each of a tenant drawn by Zipf s=1."""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import TYPE_CHECKING, Final

from bench.capacity_wiring import wire
from bench.capacity_workload import AGENT, APPROVER, Sample, draw_tenants

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bench.capacity_wiring import Wiring
    from bench.metering import GlobalIndex
    from signoff.approver.actors import Actor
    from signoff.settings import Deployment
    from signoff.store.pending_records import PendingItem

REFUND: Final = "order A-1001 arrived broken, can you refund it?"
TURN_PHASES: Final = ("pause", "notify", "decide")


def approver() -> Actor:
    """The approver, deciding through the email link the notifier sent them."""
    from signoff.approver.actors import link_recipient

    return link_recipient(APPROVER, "local-email")


def drain(wiring: Wiring) -> None:
    """Deliver every queued notification, as the notifier function does per SQS record."""
    from signoff.notify.message import NotifyMessage

    while True:
        messages = wiring.queue.receive()
        if not messages:
            return
        for message in messages:
            wiring.notifier.deliver(NotifyMessage.parse(message).subject)


def run_sample(
    deployment: Deployment, indexes: Sequence[GlobalIndex], turns: int, tenants: int, rate: float
) -> Sample:
    """``turns`` turns paused, notified, swept over, approved and finished."""
    from signoff.durable.decide import Approve

    wiring = wire(deployment, indexes)
    meter = wiring.table.meter
    drawn = draw_tenants(turns, tenants, random.Random(23))
    started = time.perf_counter()
    paused: list[PendingItem] = []
    for name in drawn:
        wiring.clock.advance(1 / rate)
        meter.phase = "pause"
        result = wiring.turns.send(AGENT, REFUND, tenant=name, environment="production")
        if result.pending is None:
            raise SystemExit(f"the turn did not pause: {result.status}")
        paused.append(result.pending)
        meter.phase = "notify"
        drain(wiring)
    meter.phase = "sweep"
    wiring.sweeper.sweep()
    stored = wiring.store.pending.get(paused[0].id)
    assert stored is not None
    for item in paused:
        wiring.clock.advance(1 / rate)
        meter.phase = "decide"
        decided = wiring.turns.decide(item.id, Approve(), approver(), schedule=None)
        if decided.result is None or decided.result.status != "finished":
            raise SystemExit(f"the approved turn did not finish: {decided}")
        meter.phase = "notify"
        drain(wiring)
    return Sample(
        turns=turns,
        tenant_turns=Counter(drawn),
        usage=meter.by_partition(*TURN_PHASES),
        sweep=meter.by_partition("sweep"),
        per_phase={phase: meter.total(phase) for phase in TURN_PHASES},
        item=stored,
        seconds=time.perf_counter() - started,
    )
