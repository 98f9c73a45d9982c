"""The built functions restored twice from one SnapStart snapshot, under Lambda's runtime client.

With ``AWS_LAMBDA_INITIALIZATION_TYPE=snap-start`` awslambdaric imports the handler
(the function's init), runs the before-snapshot hooks, asks the Runtime API's
``restore/next``, then runs the after-restore hooks that ``snapshot_restore_py`` (on
its path, as in Lambda's python runtime) holds, before its first ``invocation/next``.
A probe handler wraps each built function: it imports the function's ``app``, then
registers a before-snapshot hook that reports the owner ids init made and forks, so
two processes go on from the one initialised memory, as two environments restored
from one snapshot do; and an after-restore hook, run after signoff's, that reports
each environment's. Nothing of the function is replaced.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.packaging.test_built_handlers import built as built
from tests.packaging.test_built_handlers import built_function
from tests.packaging.test_built_handlers import lambda_env as lambda_env
from tests.packaging.test_runtime_client import answered, sandbox
from tests.packaging.test_runtime_client import ric as ric
from tests.support.aws import moto_server as moto_server
from tests.support.lambdas import load_event

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.slow

PROBE = '''\
"""{module}.{handler} with a snapshot that two environments are restored from."""

import gc
import json
import os

from snapshot_restore_py import register_after_restore, register_before_snapshot

import {module} as function  # the function's init: signoff registers its restore hooks

handler = function.{handler}


def owners():
    """The owner ids of what the function's module built: turns, a notifier."""
    found = {{}}
    for name, value in vars(function).items():
        turns = getattr(value, "turns", None)
        if isinstance(getattr(turns, "owner", None), str):
            found[name + ".turns"] = turns.owner
        elif type(value).__name__ == "Notifier":
            found[name] = value.owner
    return found


def unbuilt():
    """How many of the boto3 clients the function made are not built yet."""
    from signoff.awsclients import LazyClient

    return sum(isinstance(o, LazyClient) and not o.built for o in gc.get_objects())


def report(moment):
    line = json.dumps(
        {{"moment": moment, "pid": os.getpid(), "owners": owners(), "unbuilt": unbuilt()}}
    )
    with open(os.environ["SNAPSTART_PROBE_REPORT"], "a") as out:
        out.write(line + "\\n")


def snapshot():
    report("snapshot")
    os.fork()  # from here on two processes: the parent and its child, one memory


register_before_snapshot(snapshot)
register_after_restore(report, "restored")
'''

# Each function, and an event of events/ the restored environments serve with the
# status it answers (the queue and schedule functions: their init only).
FUNCTIONS: dict[str, tuple[str, int] | None] = {
    "MessageFunction": ("message_post", 202),
    "ResolveFunction": ("agents_list", 200),
    "NotifierFunction": None,
    "SweeperFunction": None,
    "SweepWorkerFunction": None,
}
# The scheduled sweeper only plans onto the sweep queue: it builds no turns and no
# notifier, so there is no owner id in it for a restore to renew.
OWNS_NOTHING = frozenset({"SweeperFunction"})


def _reports(path: Path, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return [json.loads(line) for line in lines]
        time.sleep(0.1)
    raise AssertionError(f"{path.name}: {count} reports awaited, got {path.read_text()!r}")


@contextlib.contextmanager
def _reaped(report: Path) -> Iterator[None]:
    """Stop the forked environments (the probe's children) the sandbox does not know."""
    try:
        yield
    finally:
        text = report.read_text() if report.exists() else ""
        lines = [json.loads(line) for line in text.splitlines()]
        parents = {line["pid"] for line in lines if line["moment"] == "snapshot"}
        for pid in {line["pid"] for line in lines} - parents:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)


@pytest.mark.parametrize("logical_id", sorted(FUNCTIONS))
def test_two_environments_restored_from_one_snapshot_get_owner_ids_of_their_own(
    logical_id: str, lambda_env: dict[str, str], ric: Path, tmp_path: Path
) -> None:
    # Given the built function wrapped by the probe, initialised as SnapStart does
    function = built_function(logical_id)
    module, _, name = function.handler.partition(".")
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "snapstart_probe.py").write_text(PROBE.format(module=module, handler=name))
    probed = dataclasses.replace(
        function,
        handler="snapstart_probe.handler",
        python_layers=(*function.python_layers, probe),
    )
    report = tmp_path / "report.jsonl"
    env = {
        **lambda_env,
        "AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start",
        "SNAPSTART_PROBE_REPORT": str(report),
    }
    # When its snapshot is restored twice (the probe's fork), each through restore/next
    # (the fork is stopped first: it holds the sandbox's stderr open)
    with sandbox(probed, env, ric) as api, _reaped(report):
        snapshot, *restored = _reports(report, 3)
        # and the restored environments serve what the function answers
        served = FUNCTIONS[logical_id]
        answers = [
            answered(api.invoke(load_event(served[0]), timeout=function.timeout), function)
            for _ in range(2 if served else 0)
        ]
        restores = len(api.restores)

    # Then both asked for their restore, and the snapshot had owners to renew (or,
    # for the planning sweeper, none at all)
    assert restores == 2
    assert snapshot["moment"] == "snapshot", snapshot
    assert bool(snapshot["owners"]) is (logical_id not in OWNS_NOTHING), snapshot
    assert [r["moment"] for r in restored] == ["restored", "restored"]
    first, second = (r["owners"] for r in restored)
    # two processes, the initialised one and its fork
    assert {r["pid"] for r in restored} == {snapshot["pid"], *(r["pid"] for r in restored)}
    assert len({r["pid"] for r in restored}) == 2
    # and each environment's owner ids are its own: the snapshot's and the other's differ
    assert set(first) == set(second) == set(snapshot["owners"])
    for part, initial in snapshot["owners"].items():
        assert len({initial, first[part], second[part]}) == 3, (logical_id, part)
    # and the clients init made, unbuilt when the probe's hook ran (the runtime runs the
    # last registered first), were built by signoff's before-snapshot hook: a restored
    # environment's first request does not build them
    assert snapshot["unbuilt"] > 0, snapshot
    assert [r["unbuilt"] for r in restored] == [0, 0], restored
    for answer in answers:
        assert served is not None and answer["statusCode"] == served[1], answer
