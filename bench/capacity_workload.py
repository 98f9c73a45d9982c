"""``bench/capacity.py``'s workload, DynamoDB's limits per partition, and a sample's record.

What the sample (``capacity_sample.py``), the sweep at scale (``capacity_sweep.py``),
the key families' projection (``capacity_families.py``) and the report
(``capacity_report.py``) share: the workload of docs/scale.md (the agent, the rate,
10,000 tenants drawn by Zipf s=1), the per-partition limits and the sweep's period,
and ``Sample``, what one second's sampled turns charged.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import random
    from collections import Counter

    from bench.metering import Usage
    from signoff.store.pending_records import PendingItem

ROOT: Final = Path(__file__).resolve().parents[1]
AGENT: Final = "customer-service"
APPROVER: Final = "approver@example.com"
TENANTS: Final = 10_000
RATE: Final = 1_000.0  # pauses a second, and as many approvals
WCU_LIMIT: Final = 1_000.0
RCU_LIMIT: Final = 3_000.0
SWEEP_EVERY: Final = 60.0  # seconds between sweeps: the template's rate(1 minute)

# -- tenants ----------------------------------------------------------------------------------


def tenant(rank: int) -> str:
    return f"tenant-{rank}"


def busiest_share(tenants: int) -> float:
    """The busiest tenant's share of the turns under Zipf s=1: 1 / H(tenants)."""
    return 1.0 / sum(1.0 / k for k in range(1, tenants + 1))


def draw_tenants(count: int, tenants: int, rng: random.Random) -> list[str]:
    """``count`` tenants drawn by Zipf s=1 over ``tenants`` (rank 1 the busiest)."""
    weights = [1.0 / k for k in range(1, tenants + 1)]
    ranks = rng.choices(range(1, tenants + 1), weights=weights, k=count)
    return [tenant(rank) for rank in ranks]


# -- the sample's record ----------------------------------------------------------------------


@dataclass
class Sample:
    """What ``turns`` sampled turns charged, by phase, index and partition."""

    turns: int
    tenant_turns: Counter[str]
    usage: dict[tuple[str, str], Usage]  # the turns' phases
    sweep: dict[tuple[str, str], Usage]  # the sample's sweep
    per_phase: dict[str, Usage]
    item: PendingItem  # a paused item as stored: what the sweep's table is filled with
    seconds: float
