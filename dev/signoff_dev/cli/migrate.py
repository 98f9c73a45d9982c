"""``signoff migrate``: move the items a previous release wrote to this release's index keys.

::

    signoff migrate [--dry-run] [--rate N] [--page-size N] [--state FILE] [--resume-from FILE]

Items the previous release wrote, and nothing has rewritten since, carry its
index keys (``pending-by-expiry``, ``outbox-unsent``, ``leases-by-expiry``; docs/scale.md,
"Legacy keys"). The sweep's ``legacy`` task moves them as it meets them; this
command moves all of them ahead of time, reading each legacy partition
(``signoff.store.migrate.LEGACY_PARTITIONS``) page by page and rewriting each item
with one conditional write (``Migrator.rewrite``): an item another writer moved
first is counted, not written again, so running it twice, or beside a live
sweep, rewrites nothing twice.

It reads the table named by ``SIGNOFF_TABLE`` (``AWS_ENDPOINT_URL``: a local
endpoint) with the deployment's shard counts (``SIGNOFF_SWEEP_SHARDS``,
``SIGNOFF_LISTING_SHARDS``: set them as the stack does), and the agents folder
(``--agents``) for each agent's ``remindAfter``, which a waiting item's new key
includes. At most ``--rate`` items a second are rewritten, so the migration leaves
the table's capacity to the running stack.

After each page the cursor goes to the state file (``--state``, default
``signoff-migrate-<table>.json``): an interrupted run continues where it stopped
with ``--resume-from FILE``. A progress line per page goes to stderr; the summary
(per legacy partition: found, rewritten, already moved, left) to stdout,
tab-separated. ``left`` counts what still has old keys when the run ends: 0 after
a run that finished, when later releases may delete the old indexes.
``--dry-run`` writes nothing (not even the state file) and counts what a run would
rewrite.

Exit codes: 0 the run finished (whatever it found), 1 an error, 2 a usage error,
130 interrupted (the state file says where to resume).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from signoff.errors import UnknownAgent, UsageError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from signoff.store.migrate import Migrator
    from signoff.store.table import Index, Item

__all__ = ["Pace", "register"]

EXIT_OK, EXIT_INTERRUPTED = 0, 130
DEFAULT_RATE: Final = 100.0
STATE_VERSION: Final = 1
COLUMNS: Final = ("index", "partition", "found", "rewritten", "already moved", "left")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``migrate`` command to the ``signoff`` parser."""
    migrate = commands.add_parser(
        "migrate",
        help="rewrite items of a previous release with this release's index keys",
        description="Rewrite every item that still has the previous release's index keys "
        "(docs/scale.md, Legacy keys), page by page, at most --rate items a second, saving "
        "the cursor after each page. Reads the table named by SIGNOFF_TABLE "
        "(AWS_ENDPOINT_URL: a local endpoint). Running it again rewrites nothing twice.",
    )
    migrate.add_argument(
        "--dry-run", action="store_true", help="write nothing; count what a run would rewrite"
    )
    migrate.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        metavar="N",
        help=f"at most N items rewritten a second (default: {DEFAULT_RATE:g})",
    )
    migrate.add_argument(
        "--page-size",
        type=int,
        default=100,
        metavar="N",
        help="items read per page, and so between two saves of the cursor (default: 100)",
    )
    migrate.add_argument(
        "--state",
        type=Path,
        default=None,
        metavar="FILE",
        help="where to save the cursor after each page "
        "(default: signoff-migrate-<table>.json, or the --resume-from file)",
    )
    migrate.add_argument(
        "--resume-from",
        type=Path,
        default=None,
        metavar="FILE",
        help="continue an interrupted run from the state file it saved",
    )
    migrate.set_defaults(command=_migrate)


# --- pacing ----------------------------------------------------------------------------


class Pace:
    """At most ``rate`` calls of ``wait`` a second, spread evenly (no bursts after a pause)."""

    def __init__(
        self,
        rate: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not rate > 0:
            raise UsageError(f"--rate {rate:g}: give a number of items a second above 0")
        self.interval = 1.0 / rate
        self._clock = clock
        self._sleep = sleep
        self._next: float | None = None

    def wait(self) -> None:
        """Return when the next call may go: ``1 / rate`` after the previous one."""
        now = self._clock()
        if self._next is not None and self._next > now:
            self._sleep(self._next - now)
            now = self._next
        self._next = now + self.interval


# --- the state file --------------------------------------------------------------------


@dataclass
class Counts:
    """What one legacy partition held, in this run."""

    found: int = 0
    rewritten: int = 0
    moved: int = 0  # another writer (a sweep, a turn) moved it first
    left: int | None = None  # None: not counted (an interrupted run)


@dataclass
class Place:
    """Where a run is in one legacy partition: its cursor, and whether it read it all."""

    index: str
    partition: str
    cursor: list[str] | None = None  # the last item handled (``_position``)
    done: bool = False
    counts: Counts = field(default_factory=Counts)

    @property
    def name(self) -> str:
        return f"{self.index} {self.partition}"


def _position(index: Index, item: Item) -> list[str]:
    """Where ``item`` is in its legacy partition: by the index's sort key, then its key."""
    return [item[index.sk], item["pk"], item["sk"]]


def _index_name(index: Index) -> str:
    return index.name or "table"


def _fresh(partitions: tuple[tuple[Index, str], ...]) -> list[Place]:
    return [Place(_index_name(index), partition) for index, partition in partitions]


def _load(path: Path, table: str, partitions: tuple[tuple[Index, str], ...]) -> list[Place]:
    """The places a previous run saved to ``path``, for the partitions this release drains.

    Raises:
        UsageError: no such file, not a state file, or one of another table.
    """
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--resume-from {path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"--resume-from {path}: not a state file of signoff migrate ({exc})"
        ) from None
    if not isinstance(saved, dict) or saved.get("version") != STATE_VERSION:
        raise UsageError(f"--resume-from {path}: not a state file of signoff migrate")
    if saved.get("table") != table:
        raise UsageError(
            f"--resume-from {path}: saved by a run on table {saved.get('table')!r}, "
            f"not {table!r} (SIGNOFF_TABLE)"
        )
    known = {(p["index"], p["partition"]): p for p in saved.get("partitions", [])}
    places = _fresh(partitions)
    for place in places:
        # a partition the file does not name (an older run's release) starts afresh
        was = known.get((place.index, place.partition))
        if was is not None:
            place.cursor, place.done = was.get("cursor"), bool(was.get("done"))
    return places


def _save(path: Path, table: str, places: list[Place]) -> None:
    """Write the state through a temporary file: an interrupted save leaves the last one."""
    state = {
        "version": STATE_VERSION,
        "table": table,
        "partitions": [
            {"index": p.index, "partition": p.partition, "cursor": p.cursor, "done": p.done}
            for p in places
        ],
    }
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    part.replace(path)


# --- the command -----------------------------------------------------------------------


def _migrator(args: argparse.Namespace) -> tuple[str, Migrator]:
    # Checked here as well as in from_env: a command-line user needs to hear
    # which table is meant, not that the template sets it for every function.
    table = os.environ.get("SIGNOFF_TABLE")
    if not table:
        raise UsageError(
            "SIGNOFF_TABLE is not set: name the DynamoDB table to migrate "
            "(and set AWS_ENDPOINT_URL to use a local endpoint)"
        )
    from signoff.store.dynamodb import DynamoStore
    from signoff.store.migrate import migrator_for

    # the deployment's shard counts (SIGNOFF_SWEEP_SHARDS, …) place the new keys; a
    # body moved to the bucket is read from it (SIGNOFF_BUCKET, when the table has one)
    store = DynamoStore.from_env(page_size=args.page_size, need_bucket=False)
    return table, migrator_for(store, remind_after=_remind_after(args.agents))


def _remind_after(agents: Path | None) -> Callable[[str], float | None]:
    """Each agent's ``remindAfter`` from the agents folder; None for an agent not in it."""
    from signoff.agents import AgentCatalog

    catalog = AgentCatalog(agents or Path(os.environ.get("SIGNOFF_AGENTS_DIR", "agents")))
    known: dict[str, float | None] = {}

    def remind_after(agent: str) -> float | None:
        if agent not in known:
            try:
                known[agent] = catalog.get(agent).config.remind_after
            except UnknownAgent:
                # said once: a wrong --agents would silently drop every reminder
                print(
                    f"signoff: agent {agent} is not in {catalog.root}: "
                    "its waiting items get no reminder",
                    file=sys.stderr,
                )
                known[agent] = None
        return known[agent]

    return remind_after


def _migrate(args: argparse.Namespace) -> int:
    from signoff.store.migrate import LEGACY_PARTITIONS

    if args.page_size < 1:
        raise UsageError(f"--page-size {args.page_size}: give a number of items above 0")
    pace = Pace(args.rate)
    table, migrator = _migrator(args)
    if args.resume_from is not None:
        places = _load(args.resume_from, table, LEGACY_PARTITIONS)
    else:
        places = _fresh(LEGACY_PARTITIONS)
    state = args.state or args.resume_from or Path(f"signoff-migrate-{table}.json")
    run = _Run(
        migrator,
        {_index_name(index): index for index, _ in LEGACY_PARTITIONS},
        places,
        pace=pace,
        table=table,
        state=None if args.dry_run else state,
    )
    if args.dry_run:
        print(f"signoff: dry run on table {table}: nothing is written", file=sys.stderr)
    else:
        print(
            f"signoff: migrating table {table}, at most {args.rate:g} items/s; "
            f"the cursor is saved to {state} (resume with --resume-from {state})",
            file=sys.stderr,
        )
    try:
        for place in places:
            if not place.done:
                run.drain(place)
        for place in places:
            place.counts.left = run.left(place)
    except KeyboardInterrupt:
        where = "" if args.dry_run else f"; resume with --resume-from {state}"
        print(f"signoff: interrupted{where}", file=sys.stderr)
        _summary(places)
        return EXIT_INTERRUPTED
    _summary(places)
    left = sum(place.counts.left or 0 for place in places)
    if left and not args.dry_run:
        print(
            f"signoff: {left} items still have old keys (written meanwhile): "
            "run signoff migrate again",
            file=sys.stderr,
        )
    return EXIT_OK


class _Run:
    """One run over the legacy partitions: rewrites paced, the cursor saved after each page.

    ``state`` None: a dry run, which rewrites nothing and saves nothing.
    """

    def __init__(
        self,
        migrator: Migrator,
        indexes: dict[str, Index],
        places: list[Place],
        *,
        pace: Pace,
        table: str,
        state: Path | None,
    ) -> None:
        self.migrator = migrator
        self.indexes = indexes
        self.places = places
        self.pace = pace
        self.table = table
        self.state = state
        self.started = time.monotonic()
        self.handled = 0  # items of every partition this run, for its pace

    @property
    def dry_run(self) -> bool:
        return self.state is None

    def drain(self, place: Place) -> None:
        """Rewrite one legacy partition, past what a run before this one handled of it."""
        index = self.indexes[place.index]
        counts = place.counts
        for number, page in enumerate(self.migrator.pages(index, place.partition), start=1):
            for item in page:
                at = _position(index, item)
                if place.cursor is not None and at <= place.cursor:
                    # handled by the run this one resumes (and refused then: what that
                    # run rewrote has left the partition)
                    continue
                self.pace.wait()
                self.handled += 1
                counts.found += 1
                if self.migrator.rewrite(item, dry_run=self.dry_run):
                    counts.rewritten += 1
                else:
                    counts.moved += 1
                place.cursor = at
            # saved once the whole page is handled: a resume reads at most a page again
            self._save()
            if page or number == 1:
                self._progress(place, number)
        place.done = True
        self._save()

    def left(self, place: Place) -> int:
        """How many items of the partition still have old keys as the run ends."""
        if self.dry_run:
            # nothing was written: what a run would rewrite is still there
            return place.counts.rewritten
        # what one more read of the partition still lists, and a run would still move
        index = self.indexes[place.index]
        return sum(
            1
            for page in self.migrator.pages(index, place.partition)
            for item in page
            if self.migrator.rewrite(item, dry_run=True)
        )

    def _save(self) -> None:
        if self.state is not None:
            _save(self.state, self.table, self.places)

    def _progress(self, place: Place, page: int) -> None:
        # The table cannot say how many items a partition holds (no count without
        # reading them all), so a line gives the counts and the pace, not an ETA.
        counts = place.counts
        elapsed = max(time.monotonic() - self.started, 1e-9)
        verb = "would rewrite" if self.dry_run else "rewritten"
        print(
            f"signoff: {place.name}: page {page}, {counts.found} found, {counts.rewritten} "
            f"{verb}, {counts.moved} already moved ({self.handled / elapsed:.0f} items/s)",
            file=sys.stderr,
            flush=True,
        )


def _summary(places: list[Place]) -> None:
    print("\t".join(COLUMNS))
    total = Counts()
    for place in places:
        c = place.counts
        print("\t".join([place.index, place.partition, *_cells(c)]))
        total.found += c.found
        total.rewritten += c.rewritten
        total.moved += c.moved
        if c.left is not None:
            total.left = (total.left or 0) + c.left
    print("\t".join(["total", "", *_cells(total)]))


def _cells(counts: Counts) -> tuple[str, ...]:
    left = "-" if counts.left is None else str(counts.left)
    return str(counts.found), str(counts.rewritten), str(counts.moved), left
