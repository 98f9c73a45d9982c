"""Every AWS request a Lambda handler makes in the tests, by function, as IAM actions.

``install`` wraps botocore's ``BaseClient._make_api_call`` (the one place every
client request passes, whatever session built the client) once per process.
A request counts for a function while that function's handler or its module's
import runs (``attributed``, used by ``tests.support.lambdas.import_handler``):
the tests' own set-up and inspection calls are outside any handler and are not
recorded. The request is recorded as the IAM actions AWS authorises it with
(``iam_actions``: ``HeadObject`` is ``s3:GetObject``, a DynamoDB transaction is
each of its items' actions), against the resource it names.

Threads a handler starts (the notifier's send threads) run outside its context:
while exactly one function is active they count for it; while several are
(concurrency tests), such a request is left out rather than guessed.

``SIGNOFF_RECORD_AWS_CALLS=<file>`` writes the record there as JSON when the
test session ends (``tests/conftest.py``); the IAM test reads it.

Under pytest-xdist each worker process holds only what its own tests recorded. So
each worker ``publish``es its record, with the functional tests it has finished,
to a folder the run's workers share (``SHARED``, beside their temporary
folders) after each functional test, and the IAM test ``gather``s every
worker's once all the functional tests it expects have finished, wherever they ran.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = [
    "FUNCTIONAL_TESTS",
    "RECORD_VARIABLE",
    "SHARED",
    "WHOLE_SUITE",
    "Record",
    "attributed",
    "gather",
    "iam_actions",
    "install",
    "publish",
    "read",
    "record",
    "write",
]

RECORD_VARIABLE: Final = "SIGNOFF_RECORD_AWS_CALLS"
# True in the config's stash when this session runs the whole functional suite.
WHOLE_SUITE: Final = pytest.StashKey[bool]()
# The functional tests whose record the IAM test compares (its own file's left out).
FUNCTIONAL_TESTS: Final = pytest.StashKey[list[str]]()
# Under xdist, in each worker's stash: the folder the run's workers publish to.
SHARED: Final = pytest.StashKey["Path"]()

# (function, IAM action) -> how many requests asked for it.
Record = Counter[tuple[str, str]]

_record: Record = Counter()
_lock = threading.Lock()
_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("aws_function", default=None)
_active: Counter[str] = Counter()  # function -> handler invocations running now
_installed = False

# Operations whose IAM action is not "<prefix>:<operation>" (the Service
# Authorization Reference's "actions defined by" tables).
_ACTION_FOR: Final = {
    ("s3", "HeadObject"): "GetObject",
    ("s3", "ListObjectsV2"): "ListBucket",
    ("s3", "DeleteObjects"): "DeleteObject",
    ("dynamodb", "TransactGetItems"): "GetItem",
    ("sqs", "SendMessageBatch"): "SendMessage",
}
# A DynamoDB transaction is authorised item by item, by each item's own action.
_TRANSACT_ITEM: Final = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


# Secrets are told apart by which of the template's secrets a read names: the
# variable the template sets to its ARN, or the channels' name prefix.
SECRET_VARIABLES: Final = {
    "SIGNOFF_RESUME_SIGNING_SECRET_ARN": "ResumeSigningSecret",
    "SIGNOFF_SESSION_KEY_SECRET_ARN": "SessionKeySecret",
}
CHANNEL_SECRETS: Final = "channel-secrets"
MODEL_SECRETS: Final = "model-secrets"


def secret_resource(secret_id: str) -> str:
    """Which grant a secret read needs: a template secret's logical id, or a name group."""
    for variable, logical_id in SECRET_VARIABLES.items():
        if os.environ.get(variable) == secret_id:
            return logical_id
    prefix = os.environ.get("SIGNOFF_CHANNEL_SECRETS_PREFIX", "")
    if prefix and secret_id.startswith(prefix):
        return CHANNEL_SECRETS
    return MODEL_SECRETS


def iam_actions(prefix: str, operation: str, params: dict[str, Any]) -> set[str]:
    """The IAM actions a request of ``operation`` with ``params`` is authorised by.

    A secret read is ``secretsmanager:GetSecretValue@<which secret>``.
    """
    if (prefix, operation) == ("secretsmanager", "GetSecretValue"):
        return {f"secretsmanager:GetSecretValue@{secret_resource(params['SecretId'])}"}
    if (prefix, operation) == ("dynamodb", "TransactWriteItems"):
        return {
            f"dynamodb:{_TRANSACT_ITEM[kind]}"
            for item in params.get("TransactItems", [])
            for kind in item
        }
    return {f"{prefix}:{_ACTION_FOR.get((prefix, operation), operation)}"}


def _function_now() -> str | None:
    named = _current.get()
    if named is not None:
        return named
    with _lock:
        running = [function for function, count in _active.items() if count]
    return running[0] if len(running) == 1 else None


def install() -> None:
    """Record every botocore request from now on (idempotent)."""
    global _installed
    if _installed:
        return
    from botocore.client import BaseClient

    original = BaseClient._make_api_call

    def recorded(self: BaseClient, operation_name: str, api_params: dict[str, Any]) -> Any:
        function = _function_now()
        if function is not None:
            # The signing name is the IAM prefix: sesv2 signs as "ses",
            # bedrock-runtime as "bedrock".
            prefix = self.meta.service_model.signing_name
            with _lock:
                for action in iam_actions(prefix, operation_name, api_params):
                    _record[(function, action)] += 1
        return original(self, operation_name, api_params)

    BaseClient._make_api_call = recorded  # type: ignore[method-assign]
    _installed = True


@contextlib.contextmanager
def attributed(function: str) -> Iterator[None]:
    """Requests made inside count for ``function`` (a template function's logical id)."""
    token = _current.set(function)
    with _lock:
        _active[function] += 1
    try:
        yield
    finally:
        with _lock:
            _active[function] -= 1
        _current.reset(token)


def record() -> Record:
    """What was recorded so far in this process."""
    with _lock:
        return Counter(_record)


def write(path: Path) -> None:
    """The record as JSON: {function: {action: count}}."""
    path.write_text(json.dumps(_grouped(), indent=2, sort_keys=True))


def _grouped() -> dict[str, dict[str, int]]:
    grouped: dict[str, dict[str, int]] = {}
    for (function, action), count in sorted(record().items()):
        grouped.setdefault(function, {})[action] = count
    return grouped


def _ungrouped(grouped: dict[str, dict[str, int]]) -> Record:
    return Counter(
        {
            (function, action): count
            for function, actions in grouped.items()
            for action, count in actions.items()
        }
    )


def read(path: Path) -> Record:
    return _ungrouped(json.loads(path.read_text()))


def publish(shared: Path, worker: str, done: list[str]) -> None:
    """This worker's record so far and the functional tests it finished, for ``gather``."""
    target = shared / f"{worker}.json"
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps({"done": done, "record": _grouped()}))
    partial.replace(target)  # whole or not at all: a reader never sees half a file


def gather(
    shared: Path, expected: list[str], *, timeout: float = 1800.0, stalled: float = 600.0
) -> Record:
    """Every worker's record, once each test of ``expected`` has finished on one of them.

    Fails after ``timeout`` seconds, or ``stalled`` seconds in which no worker
    finished another expected test (a worker that died), naming what is missing.
    """
    start = last_progress = time.monotonic()
    finished = 0
    while True:
        published = [json.loads(path.read_text()) for path in sorted(shared.glob("*.json"))]
        done = {nodeid for worker in published for nodeid in worker["done"]}
        missing = [nodeid for nodeid in expected if nodeid not in done]
        if not missing:
            total: Record = Counter()
            for worker in published:
                total.update(_ungrouped(worker["record"]))
            return total
        now = time.monotonic()
        if len(done) > finished:
            finished, last_progress = len(done), now
        if now - start > timeout or now - last_progress > stalled:
            raise AssertionError(
                f"{len(missing)} functional tests never finished on any worker, e.g. {missing[:5]}"
            )
        time.sleep(0.5)
