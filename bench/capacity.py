"""Does the table hold at scale? Units per second of each partition, against DynamoDB's limits.

Workload (docs/scale.md): **1,000,000 open approvals across 10,000 tenants (Zipf
s=1 over the tenants), 1,000 new pausing turns and 1,000 approvals a second.** A
DynamoDB partition — one partition key value of the table or of an index —
serves at most 1,000 write units and 3,000 read units a second; the bar is half
of that for every partition, the busiest tenant's included.

How: the real code paths run over ``MeteringTable`` (``bench/metering.py``): a
``Table`` over ``MemoryTable`` that charges every request's units by DynamoDB's
documented on-demand rules to the partition key value it lands on — the table's,
or each index's, the indexes' keys and projections read from ``template.yaml``.
The store ports are the ones ``MemoryStore`` builds (with the deployment's
settings, read from the template's defaults like a deployed function's), every one
rebound to that table. A sample of one second's turns (``--turns``) of the shipped
``customer-service`` agent (its scripted model; the refund tool asks for approval
in production), each of a tenant drawn by Zipf s=1 from 10,000, goes the way a
turn goes deployed: ``Turns`` as the deployment wires them (``turns_from_env``:
run slots, leases, retention) pauses it; the notifier delivers its queue message
on the agent's two channels (recording adapters: the webhook and a mailbox); an
approver approves (``Turns.decide`` as the link page does), the turn resumes and
finishes; a sweep (``Sweeper.sweep``) runs over the sample while its items wait.

Projection: the sample's units are grouped by partition key value, and the values
by their shape (ids, digests, tenants, days and shard numbers written as ``<id>``,
``<hash>``, ``<tenant>``, ``<day>``, ``<n>``), one family per index and shape:

- *constant*: a key that is the same whatever the turn (``PENDING``, ``RUN#all``,
  ``G#<agent>#<day>``) takes every turn's units: units/s = units per turn * rate;
- *sharded*: a key ending in a shard number takes what the sample put on it:
  units/s of a shard = its units / sample turns * rate — the sample being one
  second's turns, its busiest shard is the busiest of a second (the mean shown too,
  the share a uniform hash gives over time);
- *per tenant*: the busiest tenant's (``tenant-1``: 1/H(10,000) = 10.2 % of the
  turns): its partition's units / its sampled turns * its rate;
- *per item*: a key of one session or item takes one turn's units, whatever the
  rate: shown as if a turn's whole use of it fell within one second.

A sweep runs every minute (the template's schedule): its reads are measured apart,
on a table holding 10,000, 100,000 and 1,000,000 waiting items (encoded by the real
codec and loaded without charge, none due), and each partition's sweep reads / 60 s
are added to what the turns put on it. A sweep with nothing due must read ≤ 200 RRU
in ≤ 64 pages, the same (within 10 %) whatever number of items is open.

Printed: a table per index, one row per family (units per turn, the busiest
partition's units per second and % of its limits, the constant keys flagged), the
sweep's figures, and the one comparable figure: **the busiest partition's share of
its limit**, PASS / FAIL against 50 %. ``--json`` prints the same as JSON.

Left out: the API's own reads around a turn (its API key, a status poll), the link
page's view before its click, Scan-based offline tools. A DynamoDB partition also
splits when it grows hot for long; the bar is the per-key limit it cannot split past.

    python bench/capacity.py                      # 1,000 turns/s
    python bench/capacity.py --rate 10000         # the shard counts raised tenfold
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import resource
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.metering import TABLE, GlobalIndex, MeteringTable, Usage, global_indexes

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from signoff.approver.actors import Actor
    from signoff.durable.sweeper import Sweeper
    from signoff.durable.turns import Turns
    from signoff.notify.hub import Notifier
    from signoff.queue.memory import MemoryQueue
    from signoff.settings import Deployment
    from signoff.store.memory import MemoryStore
    from signoff.store.pending_records import PendingItem

ROOT: Final = Path(__file__).resolve().parents[1]
AGENT: Final = "customer-service"
REFUND: Final = "order A-1001 arrived broken, can you refund it?"
APPROVER: Final = "approver@example.com"
TENANTS: Final = 10_000
RATE: Final = 1_000.0  # pauses a second, and as many approvals
OPEN: Final = (10_000, 100_000, 1_000_000)
WCU_LIMIT: Final = 1_000.0
RCU_LIMIT: Final = 3_000.0
BAR: Final = 0.5
SWEEP_RRU: Final = 200.0
SWEEP_PAGES: Final = 64
SWEEP_FLAT: Final = 0.10
# Each of a turn's two runs (to its pause; from the approval to its end) holds a run
# slot while its model works, about 2 s (docs/operations.md, "Throughput settings"): the cap that
# serves the rate (Little's law) is rate * 2 * this, unless --set gives
# SIGNOFF_MAX_CONCURRENT_RUNS.
RUN_SECONDS: Final = 2.0
TURN_PHASES: Final = ("pause", "notify", "decide")
SWEEP_EVERY: Final = 60.0  # seconds between sweeps: the template's rate(1 minute)

# -- the deployment ---------------------------------------------------------------------------


def deployment_variables(
    template: Mapping[str, Any], rate: float, overrides: Mapping[str, str]
) -> dict[str, str]:
    """The message function's ``SIGNOFF_*`` variables as the template's defaults set them.

    For a rate above the workload's, every ``SIGNOFF_*_SHARDS`` count is raised by the
    same factor (docs/scale.md: what to change for ten times the load); the run cap is
    sized by Little's law (``RUN_SECONDS``). ``overrides`` win over both.
    """
    from signoff_dev.local.template import Tag

    parameters = template.get("Parameters", {})
    declared = dict(template.get("Globals", {}).get("Function", {}).get("Environment", {}))
    variables = dict(declared.get("Variables", {}))
    message = template["Resources"].get("MessageFunction", {}).get("Properties", {})
    variables |= message.get("Environment", {}).get("Variables", {})
    found: dict[str, str] = {}
    for name, value in variables.items():
        if isinstance(value, Tag):
            if value.name != "Ref" or value.value not in parameters:
                continue  # a resource's name or ARN: nothing the store reads
            value = parameters[value.value].get("Default", "")
        if name.startswith("SIGNOFF_") and str(value).strip():
            found[name] = str(value)
    factor = rate / RATE
    for name, value in list(found.items()):
        if name.endswith("_SHARDS") and factor > 1:
            found[name] = str(math.ceil(int(value) * factor))
    runs = int(found.get("SIGNOFF_MAX_CONCURRENT_RUNS", "0"))
    if runs:
        found["SIGNOFF_MAX_CONCURRENT_RUNS"] = str(max(runs, math.ceil(rate * 2 * RUN_SECONDS)))
    found["SIGNOFF_AGENTS_DIR"] = str(ROOT / "agents")
    return found | dict(overrides)


def metered_store(
    deployment: Deployment, indexes: Sequence[GlobalIndex], clock: Any
) -> tuple[MemoryStore, MeteringTable]:
    """The store ports ``MemoryStore`` builds, every one over one ``MeteringTable``."""
    from signoff.store.keys import Shards
    from signoff.store.memory import MemoryStore
    from signoff.store.stored import Stored

    # the shard counts DynamoStore.from_env takes from the deployment
    shards = Shards(sweep=deployment.sweep_shards, listing=deployment.listing_shards)
    store = MemoryStore(clock=clock, shards=shards)
    table = MeteringTable(store.table, indexes)
    store.table = table  # type: ignore[assignment]  # a port built from now on is over it
    for port in vars(store).values():  # one built before: rebound
        if isinstance(port, Stored):
            port._items = table
    for name in ("sessions", "pending", "outbox", "audit", "api_keys", "slots"):
        port = getattr(store, name)
        if isinstance(port, Stored) and port._items is not table:
            # what it wrote would go uncharged: a run metering nothing, passing
            raise SystemExit(f"the store's {name} port is not over the metering table")
    return store, table


@dataclass
class Wiring:
    """One deployment's services over a metered store, as the functions build them."""

    store: MemoryStore
    table: MeteringTable
    queue: MemoryQueue
    turns: Turns
    notifier: Notifier
    sweeper: Sweeper
    clock: Any


def wire(deployment: Deployment, indexes: Sequence[GlobalIndex]) -> Wiring:
    """Turns, the notifier and the sweeper of ``deployment`` over one metered store."""
    from signoff.agents import AgentCatalog
    from signoff.aws.turns import turns_from_env
    from signoff.channels.memory import RecordingChannel, RecordingMailbox
    from signoff.clock import ManualClock
    from signoff.durable.sweeper import Sweeper
    from signoff.errors import SignoffError
    from signoff.keys.tokens import signer_from
    from signoff.notify.compose import Composer
    from signoff.notify.hub import Notifier, RetrySchedule
    from signoff.queue.memory import MemoryQueue
    from signoff.secrets.memory import MemorySecrets
    from signoff.store.migrate import migrator_for

    clock = ManualClock()
    store, table = metered_store(deployment, indexes, clock)
    queue = MemoryQueue()
    agents = AgentCatalog(deployment.agents_dir)
    turns = turns_from_env(deployment, agents=agents, store=store, queue=queue, clock=clock)  # type: ignore[arg-type]
    signer = signer_from(MemorySecrets({"resume-signing": "k" * 32}))
    composer = Composer(signer=signer, public_url="https://signoff.example.com")
    # the agent's channels (channels.yaml: a webhook, and an email to one approver)
    channels: dict[str, Any] = {
        "local-webhook": RecordingChannel("local-webhook"),
        "local-email": RecordingMailbox("local-email", [APPROVER]),
    }
    notifier = Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels=channels,
        composer=lambda: composer,
        clock=clock,
        retries=RetrySchedule(deployment.notify_retry_delays),
    )

    def remind_after(name: str) -> float | None:
        try:
            seconds: float | None = agents.get(name).config.remind_after
        except SignoffError:
            return None  # the agent is gone
        return seconds

    # as sweeper_from_env builds it (every task run here: the deployment's workers do
    # the same reads, one task each)
    sweeper = Sweeper(
        turns=turns,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=queue,
        clock=clock,
        shards=store.shards.sweep,
        migrator=migrator_for(store, remind_after=remind_after),
    )
    return Wiring(store, table, queue, turns, notifier, sweeper, clock)


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


# -- the sample -------------------------------------------------------------------------------


def approver() -> Actor:
    """The approver, deciding through the email link the notifier sent them."""
    from signoff.approver.actors import link_recipient

    return link_recipient(APPROVER, "local-email")


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


# -- the sweep at scale -----------------------------------------------------------------------


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


# -- families ---------------------------------------------------------------------------------

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


# -- the report -------------------------------------------------------------------------------


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


def measure(
    *,
    rate: float = RATE,
    turns: int | None = None,
    tenants: int = TENANTS,
    sizes: Sequence[int] = OPEN,
    overrides: Mapping[str, str] | None = None,
    template: Path | None = None,
) -> Report:
    """Sample ``turns`` turns (default: one second's, ``rate``), sweep at each of ``sizes``
    open items, project to ``rate``."""
    from signoff.settings import Deployment
    from signoff_dev.local.template import load_template

    loaded = load_template(template or ROOT / "template.yaml")
    indexes = global_indexes(loaded)
    variables = deployment_variables(loaded, rate, overrides or {})
    deployment = Deployment.from_env(variables)
    sample = run_sample(deployment, indexes, turns or math.ceil(rate), tenants, rate)
    sweeps = sweep_at(deployment, indexes, sample.item, sizes) if sizes else []
    # the sweep at the most open items is the one every minute brings
    sweep = sweeps[-1].by_partition if sweeps else sample.sweep
    families = project(sample, sweep, rate, tenants)
    return Report(
        rate=rate,
        tenants=tenants,
        open=max(sizes) if sizes else sample.turns,
        settings=variables,
        indexes=[f"{i.name} ({i.projection})" for i in indexes],
        sample=sample,
        families=families,
        sweeps=sweeps,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rate", type=float, default=RATE, help="pauses (and approvals) a second")
    parser.add_argument(
        "--turns", type=int, default=None, help="sampled turns (default: one second's, --rate)"
    )
    parser.add_argument("--tenants", type=int, default=TENANTS)
    parser.add_argument(
        "--open",
        default=",".join(str(n) for n in OPEN),
        help="open items to sweep over, comma separated ('' : no sweep at scale)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SIGNOFF_NAME=VALUE",
        help="a deployment variable, over the template's default",
    )
    parser.add_argument("--template", type=Path, default=None, help="default: template.yaml")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when a bar is not met")
    args = parser.parse_args()
    overrides = dict(pair.split("=", 1) for pair in args.set)
    sizes = [int(n) for n in args.open.split(",") if n.strip()]
    report = measure(
        rate=args.rate,
        turns=args.turns,
        tenants=args.tenants,
        sizes=sizes,
        overrides=overrides,
        template=args.template,
    )
    if args.json:
        print(json.dumps(report.as_json(), indent=2, default=str))
    else:
        print_report(report)
    return 1 if args.check and not report.passed() else 0


if __name__ == "__main__":
    sys.exit(main())
