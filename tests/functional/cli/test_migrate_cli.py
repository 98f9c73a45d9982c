"""``signoff migrate`` as an operator runs it after the upgrade: a subprocess against a moto server.

The table holds what the previous release wrote (``tests/fixtures/store_v1_items.json``,
made by ``make_store_v1_items.py`` against commit 85040ab): pending items waiting
and overdue, resolved ones, running sessions (one stalled), paused and done ones
with their logs, outbox rows unsent, retrying, failed and sent, audit entries,
gated-sessions listings, run slots and API keys. Given that table, a dry run
changes nothing, a run moves every item with old index keys to the new ones and
touches nothing else, a second run finds nothing, and an interrupted run resumes
from its state file.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from signoff.store.dynamodb import DynamoStore
from tests.conftest import ROOT
from tests.support.aws import moto_server as moto_server

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.store.table import Item, Key

FIXTURE = ROOT / "tests" / "fixtures" / "store_v1_items.json"
LEGACY_KEYS = ("gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "gsi3pk", "gsi3sk")
# each old partition (its key attribute, its value, its index) -> the sweep index's
# family its items move to (docs/scale.md)
PARTITIONS = [
    ("gsi1pk", "PENDING", "pending-by-expiry", "DUE"),
    ("gsi2pk", "UNSENT", "outbox-unsent", "SEND"),
    ("gsi2pk", "RETRY", "outbox-unsent", "RETRY"),
    ("gsi2pk", "FAILED", "outbox-unsent", "FAILED"),
    ("gsi3pk", "RUNNING", "leases-by-expiry", "LEASE"),
]
TIME_KEY = re.compile(r"^\d{13}\.\d{6}#")
COLUMNS = ["index", "partition", "found", "rewritten", "already moved", "left"]


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "signoff_dev.cli.main", "migrate", *args]


def signoff(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command("--agents", str(ROOT / "agents"), *args),
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def fixture_items() -> list[Item]:
    """The previous release's items, their retention (``ttl``) moved as far as the
    clock has since the fixture was made: they are as alive now as they were then."""
    loaded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert loaded["written_by"] == "85040ab"
    shift = math.ceil(time.time() - loaded["clock"])
    items: list[Item] = loaded["items"]
    return [item | {"ttl": item["ttl"] + shift} if "ttl" in item else item for item in items]


def load(store: DynamoStore) -> dict[Key, Item]:
    """The previous release's items, written raw into the table."""
    items = fixture_items()
    for item in items:
        store.table.put(item)
    return {(item["pk"], item["sk"]): item for item in items}


def table(store: DynamoStore) -> dict[Key, Item]:
    return {(item["pk"], item["sk"]): item for page in store.table.scan() for item in page}


def legacy(items: dict[Key, Item]) -> dict[Key, Item]:
    return {key: item for key, item in items.items() if any(k in item for k in LEGACY_KEYS)}


def partition_of(item: Item) -> tuple[str, str]:
    """The old partition an item is in (``<index> <partition>``) and its new family."""
    (found,) = [(f"{i} {p}", f) for key, p, i, f in PARTITIONS if item.get(key) == p]
    return found


def summary(stdout: str) -> dict[str, tuple[int, int, int, int | None]]:
    """The summary's rows (found, rewritten, already moved, left: None when not
    counted), by ``<index> <partition>`` and ``total``."""
    header, *rows = stdout.splitlines()
    assert header.split("\t") == COLUMNS
    table = {}
    for row in rows:
        index, partition, found, rewritten, moved, left = row.split("\t")
        counts = int(found), int(rewritten), int(moved), None if left == "-" else int(left)
        table[f"{index} {partition}".strip()] = counts
    return table


@pytest.fixture
def store(moto_server: dict[str, str]) -> DynamoStore:
    return DynamoStore.from_env()


def test_the_fixture_holds_items_of_every_legacy_partition() -> None:
    # the upgrade tests below mean something only if the old partitions are all there
    items = {(item["pk"], item["sk"]): item for item in fixture_items()}
    found = {partition_of(item)[1] for item in legacy(items).values()}
    assert found == {family for *_, family in PARTITIONS}


def test_a_dry_run_counts_what_a_run_would_rewrite_and_writes_nothing(
    store: DynamoStore, moto_server: dict[str, str], tmp_path: Path
) -> None:
    before = load(store)
    old = legacy(before)

    dry = signoff("--dry-run", env=moto_server, cwd=tmp_path)

    assert dry.returncode == 0, dry.stderr
    assert table(store) == before
    total = summary(dry.stdout)["total"]
    assert total == (len(old), len(old), 0, len(old))
    assert "dry run" in dry.stderr and "would rewrite" in dry.stderr
    assert list(tmp_path.iterdir()) == [], "a dry run saves no state"


def test_a_run_moves_every_legacy_item_to_the_new_keys_and_a_second_run_changes_nothing(
    store: DynamoStore, moto_server: dict[str, str], tmp_path: Path
) -> None:
    before = load(store)
    old = legacy(before)

    run = signoff("--rate", "1000", env=moto_server, cwd=tmp_path)

    assert run.returncode == 0, run.stderr
    after = table(store)
    assert set(after) == set(before), "no item was added or deleted"
    assert legacy(after) == {}, "no item keeps an old index key"
    for key, was in old.items():
        now = after[key]
        assert now["gsi5pk"].split("#")[0] == partition_of(was)[1], key
        assert TIME_KEY.match(now["gsi5sk"]), now["gsi5sk"]
        # the record itself is untouched: only its index keys moved
        assert {k: now.get(k) for k in ("kind", "body", "status")} == {
            k: was.get(k) for k in ("kind", "body", "status")
        }
    untouched = {key: item for key, item in before.items() if key not in old}
    assert {key: after[key] for key in untouched} == untouched
    rows = summary(run.stdout)
    assert rows["total"] == (len(old), len(old), 0, 0)
    found = Counter(partition_of(item)[0] for item in old.values())
    assert {name: row[0] for name, row in rows.items() if name != "total"} == {
        f"{index} {part}": found[f"{index} {part}"] for _, part, index, _ in PARTITIONS
    }
    progress = [line for line in run.stderr.splitlines() if ": page " in line]
    assert len(progress) >= len(PARTITIONS), "a progress line per page"
    assert (tmp_path / f"signoff-migrate-{moto_server['SIGNOFF_TABLE']}.json").is_file()

    again = signoff("--rate", "1000", env=moto_server, cwd=tmp_path)

    assert again.returncode == 0, again.stderr
    assert summary(again.stdout)["total"] == (0, 0, 0, 0)
    assert table(store) == after


def test_an_interrupted_run_resumes_from_its_state_file(
    store: DynamoStore, moto_server: dict[str, str], tmp_path: Path
) -> None:
    before = load(store)
    old = legacy(before)
    state = tmp_path / "state.json"
    slow = ["--page-size", "4", "--rate", "8", "--state", str(state)]
    process = subprocess.Popen(
        command("--agents", str(ROOT / "agents"), *slow),
        cwd=tmp_path,
        env={**os.environ, **moto_server},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stderr is not None
    try:
        # the first page is handled and its cursor saved: stop the run there (Ctrl-C)
        for line in process.stderr:
            if ": page 1," in line:
                break
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert f"resume with --resume-from {state}" in stderr
    saved: dict[str, Any] = json.loads(state.read_text())
    assert saved["table"] == moto_server["SIGNOFF_TABLE"]
    first = summary(stdout)["total"]
    moved_first = len(old) - len(legacy(table(store)))
    assert 4 <= first[1] == moved_first < len(old), "stopped after its first page"

    resumed = signoff("--resume-from", str(state), "--rate", "1000", env=moto_server, cwd=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    assert legacy(table(store)) == {}
    found, rewritten, moved, left = summary(resumed.stdout)["total"]
    assert (rewritten, left) == (len(old) - moved_first, 0)
    assert found == rewritten + moved
    assert all(place["done"] for place in json.loads(state.read_text())["partitions"])


def test_a_state_file_of_another_table_is_refused(
    moto_server: dict[str, str], tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"version": 1, "table": "another", "partitions": []}))

    refused = signoff("--resume-from", str(state), env=moto_server, cwd=tmp_path)

    assert refused.returncode == 2
    assert "saved by a run on table 'another'" in refused.stderr
