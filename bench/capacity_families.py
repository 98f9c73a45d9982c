"""``bench/capacity.py``'s projection: the sample's units grouped by partition key value,
the values by their shape, each family's busiest partition at the workload's rate.

A family is one index's partition key values of one shape (ids, digests, tenants, days
and shard numbers written as ``<id>``, ``<hash>``, ``<tenant>``, ``<day>``, ``<n>``);
its kind says how its load grows with the workload (``capacity.py``'s docstring:
constant, sharded, per tenant, per item).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from bench.capacity_workload import RCU_LIMIT, SWEEP_EVERY, WCU_LIMIT, busiest_share, tenant
from bench.metering import TABLE, Usage

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bench.capacity_workload import Sample

_ULID = re.compile(r"(?<![0-9A-Z])[0-9A-HJKMNP-TV-Z]{26}(?![0-9A-Z])")
_DIGEST = re.compile(r"[0-9a-f]{16,}")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_TENANT = re.compile(r"tenant-\d+(?!\d)")
_SHARD = re.compile(r"(?<=#)\d+(?=#|$)")
PER_ITEM: Final = ("<id>", "<hash>")


def shape_of(value: str) -> str:
    """A partition key value with what varies written as placeholders."""
    shape = _ULID.sub("<id>", value)
    shape = _DIGEST.sub("<hash>", shape)
    shape = _DAY.sub("<day>", shape)
    shape = _TENANT.sub("<tenant>", shape)
    return _SHARD.sub("<n>", shape)


def tenant_of(value: str) -> str | None:
    """The tenant a partition key value names, if any."""
    found = _TENANT.search(value)
    return None if found is None else found.group()


def kind_of(shape: str) -> str:
    """How a family's load grows with the workload: per item, per tenant, sharded, constant."""
    if any(mark in shape for mark in PER_ITEM):
        return "per item"
    if "<tenant>" in shape:
        return "per tenant"
    if "<n>" in shape:
        return "sharded"
    return "constant"


def shapes(keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(index, value) → its family's shape; shard 0, written ``<base>``, joins ``<base>#<n>``."""
    found = {(index, value): shape_of(value) for index, value in keys}
    seen = set((index, shape) for (index, _), shape in found.items())
    return {
        key: f"{shape}#<n>" if (key[0], f"{shape}#<n>") in seen else shape
        for key, shape in found.items()
    }


@dataclass
class Family:
    """One index's partitions of one shape, and what the busiest of them takes."""

    index: str
    shape: str
    kind: str
    values: int
    wru_per_turn: float  # the whole family's
    rru_per_turn: float
    busiest: str  # the partition key value projected busiest
    wcu: float  # its units a second
    rcu: float
    sweep_rcu: float  # the part of ``rcu`` the sweep reads
    shard_mean_wcu: float | None = None  # a sharded family: the mean shard's
    shard_mean_rcu: float | None = None

    @property
    def load(self) -> float:
        """The busiest partition's share of its tighter limit."""
        return max(self.wcu / WCU_LIMIT, self.rcu / RCU_LIMIT)


def project(
    sample: Sample, sweep: dict[tuple[str, str], Usage], rate: float, tenants: int
) -> list[Family]:
    """Each family's busiest partition at ``rate`` turns a second, with the sweep's reads
    (one sweep's, ``sweep``, every minute) on top."""
    busiest_tenant = tenant(1)
    if sample.tenant_turns[busiest_tenant] == 0:
        busiest_tenant = sample.tenant_turns.most_common(1)[0][0]
    tenant_rate = rate * busiest_share(tenants)
    keys = sorted(set(sample.usage) | set(sweep))
    shape = shapes(keys)
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for key in keys:
        grouped[(key[0], shape[key])].append(key)
    families = []
    for (index, family), members in grouped.items():
        kind = kind_of(family)
        per_second: dict[str, tuple[float, float, float]] = {}
        wru = rru = 0.0
        for key in members:
            used = sample.usage.get(key, Usage())
            wru += used.wru
            rru += used.rru
            swept = sweep.get(key, Usage()).rru / SWEEP_EVERY
            if kind == "per item":
                scale = 1.0  # one turn's use, as if within a second
            elif kind == "per tenant":
                if tenant_of(key[1]) != busiest_tenant:
                    if swept:
                        per_second[key[1]] = (0.0, swept, swept)
                    continue
                scale = tenant_rate / sample.tenant_turns[busiest_tenant]
            else:
                scale = rate / sample.turns
            per_second[key[1]] = (used.wru * scale, used.rru * scale + swept, swept)
        if not per_second:
            continue
        top = max(
            per_second,
            key=lambda v: max(per_second[v][0] / WCU_LIMIT, per_second[v][1] / RCU_LIMIT),
        )
        wcu, rcu, swept = per_second[top]
        row = Family(
            index=index,
            shape=family,
            kind=kind,
            values=len(members),
            wru_per_turn=wru / sample.turns,
            rru_per_turn=rru / sample.turns,
            busiest=top,
            wcu=wcu,
            rcu=rcu,
            sweep_rcu=swept,
        )
        if kind == "sharded":
            row.shard_mean_wcu = sum(w for w, _, _ in per_second.values()) / len(per_second)
            row.shard_mean_rcu = sum(r for _, r, _ in per_second.values()) / len(per_second)
        families.append(row)
    return sorted(families, key=lambda f: (index_order(f.index), -f.load))


def index_order(index: str) -> tuple[int, str]:
    return (0 if index == TABLE else 1), index
