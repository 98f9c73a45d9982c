"""AWS resources for tests, created in moto from ``template.yaml`` so they cannot drift.

``create_resources`` (``signoff_dev.local.template``, shared with the local stack)
reads every table, bucket, queue and secret the template declares and creates it
with the template's own keys, indexes, TTL and redrive policy; the ``aws``
fixture does that inside ``mock_aws`` and exports the functions' environment
variables (``Globals.Function.Environment`` and each function's own) the way
Lambda would.
Import the fixture into a folder's ``conftest.py`` to use it there. The
``moto_server`` fixture does the same behind a moto server on loopback, for
code that runs in a subprocess and reaches AWS over real HTTP.

DynamoDB applies each request atomically; moto's in-process backend does not
(two threads can both pass the same condition, measured on moto 5.2.5), so the
fixture serves DynamoDB requests one at a time. The lock spans one request, so
an adapter that reads, checks in Python and then writes is still caught by the
race tests. Other services stay concurrent: an SQS long poll must not block.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
import pytest
from moto import mock_aws
from moto.core.botocore_stubber import BotocoreStubber
from moto.server import ThreadedMotoServer

from signoff_dev.local.template import REGION, AwsResources, Tag, create_resources, load_template

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "TEMPLATE",
    "AwsResources",
    "Tag",
    "aws",
    "create_resources",
    "fake_credentials",
    "free_port",
    "load_template",
    "moto_server",
    "serialise_dynamodb",
]

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"


def fake_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials no real endpoint would accept, and no profile to fall back on."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECURITY_TOKEN"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def serialise_dynamodb(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serve moto's DynamoDB requests one at a time, as DynamoDB applies each atomically."""
    lock = threading.Lock()
    process = BotocoreStubber.process_request

    def one_at_a_time(self: BotocoreStubber, request: Any) -> Any:
        if not (urlsplit(request.url).hostname or "").startswith("dynamodb."):
            return process(self, request)
        with lock:
            return process(self, request)

    monkeypatch.setattr(BotocoreStubber, "process_request", one_at_a_time)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsResources]:
    """Moto with the template's resources, and the functions' environment exported."""
    fake_credentials(monkeypatch)
    serialise_dynamodb(monkeypatch)
    with mock_aws():
        resources = create_resources()
        for name, value in resources.environment.items():
            monkeypatch.setenv(name, value)
        yield resources


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def moto_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A moto server over real HTTP on loopback, with the template's resources.

    Yields the environment a subprocess needs (endpoint, fake credentials, the
    functions' variables); this process gets the same through ``monkeypatch``.
    """
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    try:
        resources = create_resources()
        for name, value in resources.environment.items():
            monkeypatch.setenv(name, value)
        yield {**env, **resources.environment}
    finally:
        # moto's backends are process-wide: clear them for the next test's server.
        httpx.post(f"http://127.0.0.1:{port}/moto-api/reset")
        server.stop()
