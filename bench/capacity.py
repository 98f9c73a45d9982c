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
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.capacity_families import project
from bench.capacity_report import Report, print_report
from bench.capacity_sample import run_sample
from bench.capacity_sweep import sweep_at
from bench.capacity_wiring import deployment_variables
from bench.capacity_workload import RATE, ROOT, TENANTS
from bench.metering import global_indexes

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

OPEN: Final = (10_000, 100_000, 1_000_000)


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
