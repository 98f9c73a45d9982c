"""SnapStart: one snapshot restored twice is two environments, each with owner ids of its own.

Lambda initialises a SnapStart version once, snapshots its memory, and starts each
execution environment of the version from a copy of it (``signoff.aws.snapstart``).
Here this test's process stands for the snapshot: it runs the functions' init once
(the builders ``api_from_env``, ``notifier_from_env``, ``sweeper_from_env``, which
register the restore hooks), and ``os.fork`` copies it into each "environment",
which runs the after-restore hooks as the runtime does before its first invocation.
The session table stands for DynamoDB, no part of a snapshot: the parent holds it,
and what an environment wrote is written back into it before the next one is
restored. The lease is the store's own (``TableSessions.claim``, the class the
DynamoDB store uses too).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import pickle
import random
import sys
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pytest

from signoff.api.context import Api
from signoff.aws import snapshot_restore
from signoff.aws.deployment import api_from_env
from signoff.aws.notifier import notifier_from_env
from signoff.aws.snapstart import API_LAZY_PARTS, renew_after_restore, restore_hooks
from signoff.aws.sweeper import sweeper_from_env
from signoff.errors import SessionBusy
from signoff.settings import Deployment
from signoff.store.memory import MemoryStore
from signoff.store.session_records import SessionRecord
from tests.conftest import ROOT

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="a restore is played by fork")

SESSION = "s-snapstart"
TTL = 330.0


class Init:
    """What the functions' module level builds once per version: the snapshot's state."""

    def __init__(self) -> None:
        deployment = Deployment.from_env(
            {
                "SIGNOFF_TABLE": "signoff-table",
                "SIGNOFF_BUCKET": "signoff-bucket",
                "SIGNOFF_NOTIFY_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/1/notify",
                "SIGNOFF_CONTINUE_FUNCTION": "signoff-message:live",
                "SIGNOFF_AGENTS_DIR": str(ROOT / "agents"),
                "SIGNOFF_FUNCTION_TIMEOUT": "300",
            }
        )
        # the clients are built on first use, and nothing here uses them
        self.api = api_from_env(deployment)
        self.notifier = notifier_from_env(deployment)
        self.sweeper = sweeper_from_env(deployment)
        # DynamoDB's stand-in, outside the snapshot (see the module)
        self.table = MemoryStore()

    def owners(self) -> dict[str, str]:
        return {
            "turns": self.api.turns.owner,
            "notifier": self.notifier.owner,
            "sweeper": self.sweeper.turns.owner,
        }

    def claim(self) -> str:
        """This environment's turn takes the session's lease, as ``Turns`` does."""
        now = self.table.now()
        fresh = SessionRecord(
            session_id=SESSION, agent="customer-service", tenant="default", environment="prod"
        )
        claimed = self.table.sessions.claim(
            fresh, purpose="message", owner=self.api.turns.owner, until=now + TTL, now=now
        )
        assert claimed.lease_owner is not None
        return claimed.lease_owner

    def items(self) -> list[dict[str, Any]]:
        return [item for page in self.table.table.scan() for item in page]

    def write_back(self, items: list[dict[str, Any]]) -> None:
        for item in items:
            self.table.table.put(item)


def run_after_restore() -> None:
    """What Lambda's runtime does in a restored environment before its first invocation."""
    hooks = restore_hooks()
    if hooks is snapshot_restore:
        snapshot_restore.run_after_restore()
    else:  # the runtime's own module is importable here: run its registry as awslambdaric does
        for func, args, kwargs in hooks.get_after_restore():
            func(*args, **kwargs)


def restore(environment: Callable[[], Any], *, hooks: bool = True) -> Any:
    """Fork an environment from this process as it stands, run ``environment`` there
    (after the restore hooks, unless ``hooks`` is False) and return what it returned."""
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the restored environment: never back into pytest
        code = 0
        try:
            os.close(read)
            if hooks:
                run_after_restore()
            try:
                answer: Any = ("ok", environment())
            except BaseException as exc:
                answer = ("raised", f"{type(exc).__name__}: {exc}")
            with os.fdopen(write, "wb") as out:
                pickle.dump(answer, out)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer_pipe:
        data = answer_pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and data, "the environment died"
    kind, value = pickle.loads(data)
    assert kind == "ok", value
    return value


@pytest.fixture(autouse=True)
def offline_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """A region and keys for the clients the builders make; no call is ever made."""
    for name, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def init() -> Init:
    return Init()


def test_one_snapshot_restored_twice_gives_two_environments_their_own_owner_ids(
    init: Init,
) -> None:
    # Given the functions' init, run once: the snapshot's owner ids
    snapshot = init.owners()
    assert len(set(snapshot.values())) == 3

    # When two environments are restored from it, each running the after-restore hooks
    def environment() -> dict[str, Any]:
        return {**init.owners(), "draw": random.random()}

    first, second = restore(environment), restore(environment)

    # Then every owner id differs from the snapshot's and from the other environment's
    for part in ("turns", "notifier", "sweeper"):
        assert len({snapshot[part], first[part], second[part]}) == 3, part
    # and the random module draws apart (retry jitter, log sampling)
    assert first["draw"] != second["draw"]
    # and the snapshot itself (this process) is as init left it
    assert init.owners() == snapshot


def test_the_second_environment_cannot_take_the_first_environments_live_lease(
    init: Init,
) -> None:
    # Given an environment restored from the snapshot whose turn holds the session's lease
    def take() -> tuple[str, list[dict[str, Any]]]:
        return init.claim(), init.items()

    first_owner, written = restore(take)
    init.write_back(written)  # DynamoDB as the first environment left it

    # When a second environment, restored from the same snapshot, runs a turn on it
    def take_again() -> str:
        try:
            return f"took it as {init.claim()}"
        except SessionBusy as busy:
            return f"busy: {busy}"

    second = restore(take_again)

    # Then the lease is refused: the lease is the first environment's, not also its own
    assert second.startswith("busy"), second
    stored = init.table.sessions.load(SESSION)
    assert stored is not None and stored.lease_owner == first_owner


def test_without_the_restore_hooks_two_environments_share_one_lease(init: Init) -> None:
    # Given two environments restored from one snapshot without the hooks run (what
    # a SnapStart deployment would do without signoff.aws.snapstart)
    def take() -> tuple[str, list[dict[str, Any]]]:
        return init.claim(), init.items()

    first_owner, written = restore(take, hooks=False)
    init.write_back(written)

    # When the second runs a turn on the session the first's turn holds
    second_owner, _ = restore(take, hooks=False)

    # Then it takes the live lease as its own: the lease is re-entrant for its owner,
    # and both are the snapshot's owner. This is what the hooks prevent.
    assert second_owner == first_owner == init.api.turns.owner


def test_an_api_part_built_before_the_snapshot_is_built_again_after_the_restore() -> None:
    # Given an Api whose lazily built parts (a signer keeps a clock reading with its
    # keys) were built before the snapshot
    built: list[str] = []

    def part(name: str) -> Callable[[], Any]:
        return lambda: built.append(name)

    api = dataclasses.replace(
        Init().api,
        make_signer=part("signer"),
        make_session_keys=part("session_keys"),
        make_chat=part("chat"),
    )
    renew_after_restore(api=api)
    for name in API_LAZY_PARTS:
        getattr(api, name)

    # When an environment is restored and asks for each part again
    def environment() -> list[str]:
        for name in API_LAZY_PARTS:
            getattr(api, name)
        return built

    after = restore(environment)

    # Then each was built again there: once before the snapshot, once after the restore
    assert after == [*API_LAZY_PARTS, *API_LAZY_PARTS]


def test_the_parts_the_hook_drops_are_every_cached_property_of_the_api() -> None:
    # One added or renamed would keep the snapshot's value in every restored environment
    cached = {
        name for name, member in inspect.getmembers(Api) if isinstance(member, cached_property)
    }
    assert set(API_LAZY_PARTS) == cached


def test_the_stand_in_runs_hooks_in_the_runtimes_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # awslambdaric: before the snapshot last registered first, after a restore in order
    monkeypatch.setattr(snapshot_restore, "_before_snapshot", [])
    monkeypatch.setattr(snapshot_restore, "_after_restore", [])
    ran: list[str] = []
    for name in ("a", "b"):
        snapshot_restore.register_before_snapshot(ran.append, f"before {name}")
        snapshot_restore.register_after_restore(ran.append, f"after {name}")
    snapshot_restore.run_before_snapshot()
    snapshot_restore.run_after_restore()
    assert ran == ["before b", "before a", "after a", "after b"]
