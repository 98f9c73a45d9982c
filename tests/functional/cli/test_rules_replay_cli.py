"""``signoff rules replay`` as CI runs it: a subprocess against a deployed table (moto server).

The table holds calls recorded by real turns (the durable engine over the
DynamoDB store) and calls written as the journal writes them, some older than
the window; the expected changes are actauth's. Exit 0 when nothing becomes less
guarded, 1 when something does, 2 for a rules file that does not load (named
``file:line`` as ``signoff check`` names it) and other usage errors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from signoff.clock import ManualClock
from signoff.store.dynamodb import DynamoStore
from tests.conftest import ROOT
from tests.support.aws import moto_server as moto_server
from tests.support.replay_history import (
    AGENT,
    LOOSER_RULES,
    OLD_RULES,
    TIGHTER_RULES,
    Made,
    drive_turns,
    expected_changes,
    gate,
    random_calls,
    write_calls,
)

if TYPE_CHECKING:
    from pathlib import Path

DAY = 86400.0


def signoff(*args: str, env: dict[str, str], unset: tuple[str, ...] = ()) -> Any:
    full = {**os.environ, **env, "NO_COLOR": "1"}
    for name in unset:
        full.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "signoff_dev.cli.main", "rules", "replay", *args],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


@pytest.fixture
def history(moto_server: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> list[Made]:
    """Real turns an hour ago, 150 written calls over the last ten days."""
    store = DynamoStore.from_env()
    clock = ManualClock(datetime.fromtimestamp(time.time() - 3600, UTC))
    made = drive_turns(store, clock)
    now = time.time()
    written = random_calls(150, start=now - 10 * DAY, end=now - 60, seed=5)
    write_calls(store, written, gate(OLD_RULES, tmp_path_factory.mktemp("rules")))
    return made + written


def rules_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "new-actauth.yml"
    path.write_text(text)
    return path


def as_set(document: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    return {(c["sessionId"], c["callId"], c["from"], c["to"]) for c in document["changes"]}


def test_a_tighter_rules_change_is_reported_exactly_and_exits_0(
    history: list[Made], moto_server: dict[str, str], tmp_path: Path
) -> None:
    path = rules_file(tmp_path, TIGHTER_RULES)
    done = signoff(AGENT, "--rules", str(path), "--json", env=moto_server)

    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    since = datetime.fromisoformat(document["since"]).timestamp()
    expected = expected_changes(
        history, gate(OLD_RULES, tmp_path), gate(TIGHTER_RULES, tmp_path), since=since
    )
    assert as_set(document) == expected != set()
    assert document["changed"] == len(expected) and document["lessGuarded"] == 0
    assert document["calls"] == sum(1 for c in history if c.gated and c.at >= since)
    assert sum(t["count"] for t in document["transitions"]) == len(expected)
    assert document["rules"] == str(path) and document["agent"] == AGENT
    assert all(not c["lessGuarded"] and c["args"] for c in document["changes"])


def test_a_change_that_lets_a_call_through_exits_1_and_says_which(
    history: list[Made], moto_server: dict[str, str], tmp_path: Path
) -> None:
    path = rules_file(tmp_path, LOOSER_RULES)
    done = signoff(AGENT, "--rules", str(path), "--since", "2d", env=moto_server)

    assert done.returncode == 1, done.stderr
    since = time.time() - 2 * DAY
    expected = expected_changes(
        history, gate(OLD_RULES, tmp_path), gate(LOOSER_RULES, tmp_path), since=since + 60
    )
    loosened = [c for c in expected if (c[2], c[3]) == ("ask", "allow")]
    assert loosened, "the history holds acme production cancels"
    assert (
        f"!    ask → allow  {len(loosened):>6}  'cancel-production' → 'acme-cancels'" in done.stdout
    )
    assert "less guarded" in done.stdout


def test_one_tenant_only(history: list[Made], moto_server: dict[str, str], tmp_path: Path) -> None:
    path = rules_file(tmp_path, LOOSER_RULES)
    done = signoff(AGENT, "--rules", str(path), "--tenant", "globex", "--json", env=moto_server)

    # globex's cancels stay asked about: nothing of its history becomes less guarded
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    since = datetime.fromisoformat(document["since"]).timestamp()
    globex = [c for c in history if c.tenant == "globex"]
    assert as_set(document) == expected_changes(
        globex, gate(OLD_RULES, tmp_path), gate(LOOSER_RULES, tmp_path), since=since
    )
    assert {c["tenant"] for c in document["changes"]} == {"globex"}


def test_a_rules_file_that_does_not_load_is_a_usage_error_naming_its_line(
    moto_server: dict[str, str], tmp_path: Path
) -> None:
    path = rules_file(
        tmp_path,
        "rules:\n  - name: refunds\n    scope: '*/*/*'\n"
        "    tool: issue_refund\n    decision: maybe\n",
    )
    done = signoff(AGENT, "--rules", str(path), env=moto_server)

    assert done.returncode == 2
    assert f"{path}:5: rules[0] 'refunds'.decision:" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("args", "unset", "says"),
    [
        (("--since", "last tuesday"), (), "--since 'last tuesday'"),
        (("--since", "2999-01-01"), (), "not in the past"),
        ((), ("SIGNOFF_TABLE",), "SIGNOFF_TABLE is not set"),
    ],
)
def test_other_usage_errors_exit_2(
    moto_server: dict[str, str],
    tmp_path: Path,
    args: tuple[str, ...],
    unset: tuple[str, ...],
    says: str,
) -> None:
    path = rules_file(tmp_path, OLD_RULES)
    env = {k: v for k, v in moto_server.items() if k not in unset}
    done = signoff(AGENT, "--rules", str(path), *args, env=env, unset=unset)
    assert done.returncode == 2
    assert says in done.stderr
