"""``bench/capacity.py``'s report: the families, the sweep's figures and the verdict
against the bars, printed as tables or as JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Final

from bench.capacity_workload import AGENT, RCU_LIMIT, SWEEP_EVERY, WCU_LIMIT, busiest_share
from bench.metering import Usage

if TYPE_CHECKING:
    from bench.capacity_families import Family
    from bench.capacity_sweep import SweepFigure
    from bench.capacity_workload import Sample

BAR: Final = 0.5
SWEEP_RRU: Final = 200.0
SWEEP_PAGES: Final = 64
SWEEP_FLAT: Final = 0.10


@dataclass
class Report:
    rate: float
    tenants: int
    open: int
    settings: dict[str, str]
    indexes: list[str]
    sample: Sample
    families: list[Family]
    sweeps: list[SweepFigure]

    @property
    def busiest(self) -> Family:
        return max(self.families, key=lambda f: f.load)

    def over(self) -> list[Family]:
        return [f for f in self.families if f.load > BAR]

    def sweep_problems(self) -> list[str]:
        problems = [
            f"{s.open:,} open: {s.rru:,.1f} RRU in {s.pages:,} pages"
            for s in self.sweeps
            if s.rru > SWEEP_RRU or s.pages > SWEEP_PAGES
        ]
        if self.sweeps:
            low = min(s.rru for s in self.sweeps)
            high = max(s.rru for s in self.sweeps)
            if high > low * (1 + SWEEP_FLAT):
                problems.append(f"grows with open items: {low:,.1f} → {high:,.1f} RRU")
        return problems

    def passed(self) -> bool:
        return not self.over() and not self.sweep_problems()

    def as_json(self) -> dict[str, Any]:
        busiest = self.busiest
        return {
            "workload": {
                "rate": self.rate,
                "tenants": self.tenants,
                "open": self.open,
                "busiestTenantShare": busiest_share(self.tenants),
                "sampleTurns": self.sample.turns,
            },
            "settings": self.settings,
            "indexes": self.indexes,
            "limits": {"wcu": WCU_LIMIT, "rcu": RCU_LIMIT, "bar": BAR},
            "perTurn": {
                phase: {"wru": used.wru / self.sample.turns, "rru": used.rru / self.sample.turns}
                for phase, used in self.sample.per_phase.items()
            },
            "families": [asdict(f) | {"load": f.load} for f in self.families],
            "sweep": [
                {k: v for k, v in asdict(s).items() if k != "by_partition"} for s in self.sweeps
            ],
            "busiest": asdict(busiest) | {"load": busiest.load},
            "sweepProblems": self.sweep_problems(),
            "passed": self.passed(),
        }


def print_report(report: Report) -> None:
    sample = report.sample
    share = busiest_share(report.tenants)
    print(
        f"Capacity at {report.rate:,.0f} pauses + {report.rate:,.0f} approvals a second,"
        f" {report.open:,} open approvals, {report.tenants:,} tenants"
        f" (Zipf s=1: the busiest {share:.1%} of the turns)"
    )
    print(
        f"Sample: {sample.turns:,} turns of {AGENT} (pause, notify, approve, resume to the end)"
        f" in {sample.seconds:.1f} s; indexes: {', '.join(report.indexes)}"
    )
    shown = ", ".join(f"{k}={v}" for k, v in sorted(report.settings.items()) if k in SHOWN)
    print(f"Settings: {shown}")
    per_turn = " + ".join(
        f"{phase} {used.wru / sample.turns:.1f}/{used.rru / sample.turns:.1f}"
        for phase, used in sample.per_phase.items()
    )
    total = Usage()
    for used in sample.per_phase.values():
        total.add(used)
    print(
        f"Per turn: {total.wru / sample.turns:.1f} WRU, {total.rru / sample.turns:.1f} RRU"
        f" (WRU/RRU: {per_turn})"
    )
    print(
        f"Limits per partition: {WCU_LIMIT:,.0f} WCU/s, {RCU_LIMIT:,.0f} RCU/s; bar {BAR:.0%}."
        f" Sweep reads every {SWEEP_EVERY:.0f} s at {report.open:,} open included."
    )
    current = None
    header = (
        f"  {'family':<34} {'kind':<10} {'keys':>6} {'WRU/turn':>9} {'RRU/turn':>9}"
        f" {'WCU/s':>9} {'%':>6} {'RCU/s':>9} {'%':>6}"
    )
    for family in report.families:
        if family.index != current:
            current = family.index
            print(f"\n{current}\n{header}")
        flag = "  CONSTANT KEY" if family.kind == "constant" else ""
        if family.kind == "sharded" and family.shard_mean_wcu is not None:
            flag = f"  (mean shard {family.shard_mean_wcu:,.1f} WCU/s)"
        if family.kind == "per item":
            flag = "  (one turn's use)"
        if family.load > BAR:
            flag += "  OVER"
        print(
            f"  {family.shape[:34]:<34} {family.kind:<10} {family.values:>6,}"
            f" {family.wru_per_turn:>9.2f} {family.rru_per_turn:>9.2f}"
            f" {family.wcu:>9,.1f} {family.wcu / WCU_LIMIT:>6.1%}"
            f" {family.rcu:>9,.1f} {family.rcu / RCU_LIMIT:>6.1%}{flag}"
        )
    print(f"\nA sweep with nothing due (bar: ≤ {SWEEP_RRU:.0f} RRU, ≤ {SWEEP_PAGES} pages, flat):")
    print(
        f"  {'open items':>12} {'RRU':>12} {'pages':>8} {'gets':>8} {'seconds':>8}"
        f" {'fill s':>8} {'RSS MB':>8}"
    )
    for s in report.sweeps:
        print(
            f"  {s.open:>12,} {s.rru:>12,.1f} {s.pages:>8,} {s.gets:>8,}"
            f" {s.seconds:>8.1f} {s.fill_seconds:>8.1f} {s.rss_mb:>8,.0f}"
        )
    busiest = report.busiest
    limit = "write" if busiest.wcu / WCU_LIMIT >= busiest.rcu / RCU_LIMIT else "read"
    units = busiest.wcu if limit == "write" else busiest.rcu
    cap = WCU_LIMIT if limit == "write" else RCU_LIMIT
    print(
        f"\nBusiest partition: {busiest.busiest} ({busiest.index}, {busiest.kind})"
        f" at {busiest.load:.0%} of its {limit} limit ({units:,.0f} of {cap:,.0f} units/s)"
    )
    over = report.over()
    if over:
        listed = ", ".join(f"{f.shape} ({f.index}) {f.load:.0%}" for f in over)
        print(f"FAIL: {len(over)} families above {BAR:.0%}: {listed}")
    else:
        print(f"PASS: no partition above {BAR:.0%}")
    problems = report.sweep_problems()
    print(f"FAIL: sweep {'; '.join(problems)}" if problems else "PASS: the sweep's reads are flat")


SHOWN: Final = (
    "SIGNOFF_MAX_CONCURRENT_RUNS",
    "SIGNOFF_MAX_CONCURRENT_RUNS_PER_TENANT",
    "SIGNOFF_SWEEP_SHARDS",
    "SIGNOFF_LISTING_SHARDS",
    "SIGNOFF_RETENTION_DAYS",
)
