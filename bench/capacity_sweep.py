"""``bench/capacity.py``'s sweep at scale: one sweep's reads over a table holding
10,000, 100,000 or 1,000,000 waiting items (encoded by the real codec and loaded
without charge, none due)."""

from __future__ import annotations

import random
import resource
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from bench.capacity_wiring import wire
from bench.capacity_workload import TENANTS, draw_tenants

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from bench.metering import GlobalIndex, Usage
    from signoff.settings import Deployment
    from signoff.store.pending_records import PendingItem


@dataclass
class SweepFigure:
    open: int
    rru: float
    pages: int
    gets: int
    seconds: float
    fill_seconds: float
    rss_mb: float
    by_partition: dict[tuple[str, str], Usage] = field(repr=False)


def waiting_items(
    template: PendingItem, count: int, now: float, rng: random.Random
) -> Iterator[Any]:
    """``count`` items like ``template``, each of its own session and a Zipf-drawn
    tenant, waiting: requested in the last hour, due in 1 to 24 hours."""
    from signoff.ids import new_id

    tenants = draw_tenants(count, TENANTS, rng)
    for name in tenants:
        requested = now - rng.uniform(0, 3600)
        yield template.model_copy(
            update={
                "id": new_id(),
                "session_id": new_id(),
                "run_id": new_id(),
                "tenant": name,
                "requested_at": requested,
                "expires_at": now + rng.uniform(3600, 86400),
            }
        )


def sweep_at(
    deployment: Deployment,
    indexes: Sequence[GlobalIndex],
    template: PendingItem,
    sizes: Sequence[int],
) -> list[SweepFigure]:
    """One sweep's reads over a table holding each of ``sizes`` waiting items, none due."""
    wiring = wire(deployment, indexes)
    codec = wiring.store.pending._codec
    now = wiring.clock.now().timestamp()
    rng = random.Random(1)
    figures = []
    held = 0
    for size in sorted(sizes):
        started = time.perf_counter()
        records = waiting_items(template, size - held, now, rng)
        held += wiring.table.load(codec.encode(record) for record in records)
        filled = time.perf_counter() - started
        wiring.table.meter.reset()
        wiring.table.meter.phase = "sweep"
        started = time.perf_counter()
        report = wiring.sweeper.sweep()
        seconds = time.perf_counter() - started
        acted = {name: value for name, value in asdict(report).items() if value}
        if acted:
            raise SystemExit(f"the sweep over {size:,} waiting items did something: {acted}")
        total = wiring.table.meter.total()
        figures.append(
            SweepFigure(
                open=size,
                rru=total.rru,
                pages=total.pages,
                gets=total.gets,
                seconds=seconds,
                fill_seconds=filled,
                rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                by_partition=wiring.table.meter.by_partition(),
            )
        )
    return figures
