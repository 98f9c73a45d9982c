"""Invoking the Lambda handlers in-process, with their events/ files, against moto."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from signoff.continuations.memory import MemoryContinuations
from tests.support import awscalls

if TYPE_CHECKING:
    from types import ModuleType

    from tests.support.aws import AwsResources

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
# functions/<folder>/ -> the function's logical id in template.yaml.
FUNCTIONS = {
    "message": "MessageFunction",
    "resolve": "ResolveFunction",
    "notifier": "NotifierFunction",
    "sweeper": "SweeperFunction",
    "sweep_worker": "SweepWorkerFunction",
}


def load_event(name: str, **placeholders: str) -> dict[str, Any]:
    """``events/<name>.json`` with its placeholders (``PENDING_ID``, …) replaced."""
    text = (EVENTS / f"{name}.json").read_text()
    for placeholder, value in placeholders.items():
        text = text.replace(placeholder, value)
    event: dict[str, Any] = json.loads(text)
    # Without a key of its own the request is anonymous (the `default` tenant).
    headers = event.get("headers", {})
    if headers.get("x-api-key") == "API_KEY":
        del headers["x-api-key"]
    return event


@dataclass
class FakeLambdaContext:
    """What the Lambda runtime passes as ``context``; ``remaining_ms`` sets the deadline."""

    remaining_ms: int = 60_000
    function_name: str = "signoff-test"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:signoff-test"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def import_handler(function: str) -> ModuleType:
    """A fresh import of ``functions/<function>/app.py`` (its cold start)."""
    path = ROOT / "functions" / function / "app.py"
    name = f"signoff_fn_{function}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # Every AWS request of the import and of each invocation counts for this function
    # (tests/functional/template/test_iam_grants.py compares them with its policy).
    awscalls.install()
    logical_id = FUNCTIONS[function]
    with awscalls.attributed(logical_id):
        spec.loader.exec_module(module)
    handler = module.handler

    @functools.wraps(handler)
    def recorded(event: Any, context: Any) -> Any:
        with awscalls.attributed(logical_id):
            return handler(event, context)

    module.handler = recorded
    return module


@dataclass
class Lambdas:
    """The message and resolve functions of one deployment on moto."""

    message: ModuleType
    resolve: ModuleType
    continuations: MemoryContinuations
    resources: AwsResources

    @property
    def api(self) -> Any:
        return self.message.API

    def invoke(self, function: str, event: dict[str, Any], **context: Any) -> dict[str, Any]:
        module = self.message if function == "message" else self.resolve
        result: dict[str, Any] = module.handler(event, FakeLambdaContext(**context))
        return result


def body(response: dict[str, Any]) -> Any:
    return json.loads(response["body"])


def deployed_at(monkeypatch: pytest.MonkeyPatch, agents: Path, *, anonymous: bool = True) -> None:
    """The environment the template gives the functions, with ``agents`` as the agents layer.

    Channel secrets are ``signoff/<name>`` in the moto Secrets Manager; links point at
    ``https://api.example.com``; tracing is off.
    """
    for name, value in {
        "SIGNOFF_AGENTS_DIR": str(agents),
        "SIGNOFF_ENVIRONMENT": "production",
        "SIGNOFF_ALLOW_ANONYMOUS": "true" if anonymous else "false",
        "SIGNOFF_PUBLIC_URL": "https://api.example.com",
        "SIGNOFF_CHANNEL_SECRETS_PREFIX": "signoff/",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)


def queued_batch(resources: AwsResources) -> dict[str, Any]:
    """The SQS event the notifier would get: every message now on the notify queue.

    ``VisibilityTimeout=0`` leaves them on the queue, as a failed batch would.
    """
    url = resources.environment["SIGNOFF_NOTIFY_QUEUE_URL"]
    return sqs_event(url, VisibilityTimeout=0)


def sqs_event(url: str, **receive: Any) -> dict[str, Any]:
    """The SQS event Lambda would pass for the (up to ten) messages now on the queue at ``url``;
    ``receive`` goes to ``ReceiveMessage`` as it is."""
    import boto3

    got = boto3.client("sqs").receive_message(QueueUrl=url, MaxNumberOfMessages=10, **receive)
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": f"arn:aws:sqs:us-east-1:123456789012:{url.rsplit('/', 1)[-1]}",
                "awsRegion": "us-east-1",
            }
            for m in got.get("Messages", [])
        ]
    }


@pytest.fixture
def lambdas(aws: AwsResources, monkeypatch: pytest.MonkeyPatch) -> Lambdas:
    """Both functions imported as Lambda would, against the template's resources on moto."""
    monkeypatch.setenv("SIGNOFF_AGENTS_DIR", str(ROOT / "agents"))
    monkeypatch.setenv("SIGNOFF_ENVIRONMENT", "production")
    monkeypatch.setenv("SIGNOFF_ALLOW_ANONYMOUS", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "signoff")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    return imported_lambdas(aws)


def imported_lambdas(aws: AwsResources) -> Lambdas:
    """The message and resolve functions imported as Lambda would, under the environment
    the caller set, sharing one in-memory continuations port: Lambda's async self-invoke
    cannot run on moto, so the tests drive continuations."""
    message, resolve = import_handler("message"), import_handler("resolve")
    continuations = MemoryContinuations()
    for module in (message, resolve):
        module.API = dataclasses.replace(module.API, continuations=continuations)
    return Lambdas(message, resolve, continuations, aws)
