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
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = [
    "RECORD_VARIABLE",
    "WHOLE_SUITE",
    "Record",
    "attributed",
    "iam_actions",
    "install",
    "read",
    "record",
    "write",
]

RECORD_VARIABLE: Final = "SIGNOFF_RECORD_AWS_CALLS"
# True in the config's stash when this session runs the whole functional suite.
WHOLE_SUITE: Final = pytest.StashKey[bool]()

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
    grouped: dict[str, dict[str, int]] = {}
    for (function, action), count in sorted(record().items()):
        grouped.setdefault(function, {})[action] = count
    path.write_text(json.dumps(grouped, indent=2, sort_keys=True))


def read(path: Path) -> Record:
    grouped: dict[str, dict[str, int]] = json.loads(path.read_text())
    return Counter(
        {
            (function, action): count
            for function, actions in grouped.items()
            for action, count in actions.items()
        }
    )
