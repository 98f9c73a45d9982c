"""SnapStart priming: what a first request builds lazily is built before the snapshot, and
only then.

The builders register ``signoff.aws.snapstart.prime`` as a before-snapshot hook, which
Lambda's runtime runs only when it takes a SnapStart snapshot. Each case runs in a
fresh interpreter: pydantic builds a model's validator once per process, so models
this test process already used would prove nothing.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from signoff import awsclients
from signoff.aws import snapshot_restore
from signoff.aws import snapstart as snapstart_module
from tests.conftest import ROOT

# The functions' init (the three builders), then a report of what is built: the
# boto3 clients made (built or not), and the loaded signoff models still waiting for
# their first use.
INIT = """\
import gc, json, os, sys
from pydantic import BaseModel
from signoff.awsclients import LazyClient
from signoff import awsclients
from signoff.aws import snapshot_restore
from signoff.aws.deployment import api_from_env
from signoff.aws.notifier import notifier_from_env
from signoff.aws.sweeper import sweeper_from_env
from signoff.settings import Deployment

opened = []
SOCKETS = ("socket.connect", "socket.getaddrinfo")
sys.addaudithook(lambda event, args: opened.append(event) if event in SOCKETS else None)
deployment = Deployment.from_env({{
    "SIGNOFF_TABLE": "signoff-table",
    "SIGNOFF_BUCKET": "signoff-bucket",
    "SIGNOFF_NOTIFY_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/1/notify",
    "SIGNOFF_CONTINUE_FUNCTION": "signoff-message:live",
    "SIGNOFF_AGENTS_DIR": {agents!r},
    "SIGNOFF_FUNCTION_TIMEOUT": "300",
}})
api = api_from_env(deployment)
notifier = notifier_from_env(deployment)
sweeper = sweeper_from_env(deployment)


def waiting():
    found = []
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("signoff."):
            continue
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel):
                if value.__module__ == name and not value.__pydantic_complete__:
                    found.append(name + "." + value.__qualname__)
    return sorted(found)


def report():
    return {{
        "clients": [c.built for c in gc.get_objects() if isinstance(c, LazyClient)],
        "waiting": waiting(),
        "hooks": len(snapshot_restore._before_snapshot),
    }}


before = report()
{then}
print(json.dumps({{"before": before, "after": report(), "opened": opened}}))
"""
OFFLINE = {
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",
    "PATH": "/usr/bin:/bin",
}


def _init(then: str) -> dict[str, Any]:
    code = INIT.format(agents=str(ROOT / "agents"), then=textwrap.dedent(then))
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**OFFLINE, "PYTHONPATH": f"{ROOT / 'layers' / 'signoff'}:{ROOT}"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_the_snapshot_holds_the_built_clients_and_models() -> None:
    # Given the functions' init, which builds its clients and validators lazily
    # When the runtime runs the before-snapshot hooks, as it does for SnapStart
    found = _init("snapshot_restore.run_before_snapshot()")

    # Then before them nothing was built, and the three builders registered one hook
    assert found["before"]["clients"] and not any(found["before"]["clients"])
    assert "signoff.store.session_records.SessionRecord" in found["before"]["waiting"]
    assert found["before"]["hooks"] == found["after"]["hooks"]
    # and after them every client made and every loaded model are built
    assert found["after"]["clients"] and all(found["after"]["clients"])
    assert found["after"]["waiting"] == []
    # without a connection opened: a client makes none until its first call
    assert found["opened"] == []


@pytest.mark.slow
def test_without_a_snapshot_init_builds_nothing_ahead() -> None:
    # Given the functions' init, with no snapshot taken (SnapStart off: no hook runs)
    found = _init("")

    # Then the first request still builds the client and the models, as before
    assert found["after"]["clients"] and not any(found["after"]["clients"])
    assert "signoff.store.session_records.SessionRecord" in found["after"]["waiting"]


def test_priming_is_registered_once_however_many_builders_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(snapshot_restore, "_before_snapshot", [])
    monkeypatch.setattr(snapstart_module, "_primed", False)
    monkeypatch.setattr(snapstart_module, "restore_hooks", lambda: snapshot_restore)

    snapstart_module.prime_before_snapshot()
    snapstart_module.prime_before_snapshot()

    assert len(snapshot_restore._before_snapshot) == 1


def test_a_part_that_fails_is_logged_and_left_to_its_first_use(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Given clients that cannot be built before the snapshot (a failure there would
    # fail the version's publication)
    def unbuildable() -> int:
        raise RuntimeError("no region")

    monkeypatch.setattr(awsclients, "build_made", unbuildable)

    # When the process is primed
    with caplog.at_level(logging.WARNING, logger="signoff"):
        built = snapstart_module.prime()

    # Then the other parts are built, and the log says which part was not and why
    assert "clients" not in built
    assert set(built) == {"models", "tools"}
    logged = [r.__dict__ for r in caplog.records if r.getMessage() == "not primed"]
    assert [(r["part"], r["error"]) for r in logged] == [("clients", "RuntimeError('no region')")]
