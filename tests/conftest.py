"""Suite-wide checks: every LoopEvent built anywhere in the tests is validated
against the checked-in ``protocol/loop-event.schema.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from signoff import events
from tests.support import awscalls
from tests.support.aws import aws as aws  # the moto fixture, for every test folder

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_FILE = ROOT / "protocol" / "loop-event.schema.json"


def schema_validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


_VALIDATOR = schema_validator()
VALIDATED: list[str] = []


def validate_event(data: dict[str, Any]) -> None:
    """Fail loudly when an event's wire form breaks the schema."""
    errors = sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(e.path))
    if errors:
        raise AssertionError(f"event violates the schema: {data}: {errors[0].message}")
    VALIDATED.append(data["type"])


@pytest.fixture(autouse=True, scope="session")
def _validate_every_event() -> Any:
    # Every event class inherits its constructor from _Event, so wrapping it sees
    # each event the engine, the adapters or a test creates.
    original = events._Event.__init__

    def checked(self: events._Event, /, **data: Any) -> None:
        original(self, **data)
        if "type" in type(self).model_fields:
            validate_event(events.dump(self))  # type: ignore[arg-type]

    events._Event.__init__ = checked  # type: ignore[method-assign]
    yield
    events._Event.__init__ = original  # type: ignore[method-assign]


def pytest_sessionfinish(session: pytest.Session) -> None:
    # The AWS requests each handler made (tests/support/awscalls.py), for the IAM test.
    target = os.environ.get(awscalls.RECORD_VARIABLE)
    if target:
        awscalls.write(Path(target))


_IAM_TEST = "tests/functional/template/test_iam_grants.py"
_FUNCTIONAL = ROOT / "tests" / "functional"
_functional_deselected: list[str] = []


def _functional(path: Path) -> bool:
    """A test file of the functional suite, in a subject folder of it or not."""
    return path.is_relative_to(_FUNCTIONAL)


def pytest_deselected(items: list[pytest.Item]) -> None:
    _functional_deselected.extend(i.nodeid for i in items if _functional(i.path))


@pytest.fixture(autouse=True, scope="session")
def _share_aws_calls(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Under xdist: the folder every worker of this run publishes its AWS record to
    # (tests/support/awscalls.py), beside the workers' own temporary folders.
    if hasattr(request.config, "workerinput"):
        shared = tmp_path_factory.getbasetemp().parent / "aws-calls"
        shared.mkdir(exist_ok=True)
        request.config.stash[awscalls.SHARED] = shared


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    finished = yield
    shared = item.config.stash.get(awscalls.SHARED, None)
    if shared is not None and _functional(item.path):
        _functional_finished.append(item.nodeid)
        worker = item.config.workerinput["workerid"]  # type: ignore[attr-defined]
        awscalls.publish(shared, worker, _functional_finished)
    return finished


_functional_finished: list[str] = []


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # The IAM test compares what the functional suite's handlers called
    # (tests/support/awscalls.py): it runs after every other test, and uses this
    # session's record only when every functional test is in it (under xdist,
    # every worker's: it waits for the functional tests the others run).
    last = [item for item in items if item.nodeid.startswith(_IAM_TEST)]
    if not last:
        return
    items[:] = [item for item in items if item not in last] + last
    files = {item.path for item in items if _functional(item.path)}
    config.stash[awscalls.WHOLE_SUITE] = not _functional_deselected and files == set(
        _FUNCTIONAL.rglob("test_*.py")
    )
    config.stash[awscalls.FUNCTIONAL_TESTS] = [
        item.nodeid for item in items if _functional(item.path) and item not in last
    ]
