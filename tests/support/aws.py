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

Building the resources costs a third of a second or more per test (a table with
three indexes, a bucket, two queues, two secrets), and a fresh boto3 session per
test loads each service model again; both were most of a moto-backed test's time.
So ``aws`` builds them once per test session (``TemplateAccount``) and lends them
to each test empty, on one boto3 session whose service models load once.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from unittest import mock
from urllib.parse import urlsplit

import boto3
import httpx
import pytest
from moto import mock_aws
from moto.backends import get_backend
from moto.core.botocore_stubber import BotocoreStubber
from moto.s3.models import s3_backends
from moto.server import ThreadedMotoServer

from signoff_dev.local.template import (
    ACCOUNT_ID,
    REGION,
    AwsResources,
    Tag,
    create_resources,
    load_template,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "TEMPLATE",
    "AwsResources",
    "Tag",
    "TemplateAccount",
    "aws",
    "create_resources",
    "fake_credentials",
    "free_port",
    "load_template",
    "mocked_aws",
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


# The services create_resources puts the template's resources in: tables, buckets,
# queues, secrets. TemplateAccount empties each of them after a test.
KEPT_SERVICES: Final = ("dynamodb", "s3", "sqs", "secretsmanager")


class TemplateAccount:
    """The template's resources in moto, built once per test session and lent to each test.

    moto's state is per process, and other tests run moto servers in this process
    (``moto_server``, the local stack's emulator) that reset it when they stop. So
    between tests the four services' backends are held here, outside moto's registry,
    where no reset reaches them: ``lend`` puts them back for one test, ``take_back``
    empties what the test wrote (items, objects, messages, changed secret values,
    and any table, bucket, queue or secret it created) and takes them out again. The
    other services (SES, …) start empty in each test, as moto's own reset leaves them.
    Anything unexpected while emptying drops the held backends: the next test builds
    the resources again.
    """

    def __init__(self) -> None:
        self.template = load_template()
        self.session = boto3_session()
        self._clients: dict[str, Any] = {}
        self._held: dict[str, dict[str, Any]] = {}  # service -> region -> moto backend
        self._bucket_accounts: dict[str, tuple[str, str]] = {}  # S3's global name index
        self._resources: AwsResources | None = None
        self._secrets: dict[str, str] = {}  # the template's secrets: ARN -> value
        self._versions: dict[str, str] = {}  # ARN -> the version holding that value
        self._keys: dict[str, list[str]] = {}  # table -> its key attributes

    def _client(self, service: str) -> Any:
        if service not in self._clients:
            self._clients[service] = self.session.client(service, region_name=REGION)  # type: ignore[call-overload]
        return self._clients[service]

    def lend(self) -> AwsResources:
        """The resources, empty, in the moto mock that is active now."""
        if self._resources is None:
            self._resources = create_resources(self.template)
            secrets = self._client("secretsmanager")
            for arn in self._resources.secrets.values():
                current = secrets.get_secret_value(SecretId=arn)
                self._secrets[arn] = current["SecretString"]
                self._versions[arn] = current["VersionId"]
            dynamodb = self._client("dynamodb")
            self._keys = {
                table: [
                    key["AttributeName"]
                    for key in dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]
                ]
                for table in self._resources.tables.values()
            }
            return self._resources
        for service, regions in self._held.items():
            get_backend(service)[ACCOUNT_ID].update(regions)  # type: ignore[call-overload]
        s3_backends.bucket_accounts.update(self._bucket_accounts)
        self._held, self._bucket_accounts = {}, {}
        return self._resources

    def take_back(self) -> None:
        """Empty the resources and hold them until the next ``lend``."""
        try:
            self._empty()
        except Exception:
            self._resources = None  # built again by the next test
            return
        for service in KEPT_SERVICES:
            account = get_backend(service)[ACCOUNT_ID]
            self._held[service] = {region: account.pop(region) for region in list(account)}
        ours = [
            name
            for name, (_, account) in s3_backends.bucket_accounts.items()
            if account == ACCOUNT_ID
        ]
        self._bucket_accounts = {name: s3_backends.bucket_accounts.pop(name) for name in ours}

    def _empty(self) -> None:
        assert self._resources is not None
        resources = self._resources
        dynamodb, s3 = self._client("dynamodb"), self._client("s3")
        sqs, secrets = self._client("sqs"), self._client("secretsmanager")
        # A missing table, bucket, queue or secret raises: something reset moto.
        tables = set(dynamodb.list_tables()["TableNames"])
        for table in tables - set(resources.tables.values()):
            dynamodb.delete_table(TableName=table)
        for table, keys in self._keys.items():
            _empty_table(dynamodb, table, keys)
        buckets = {bucket["Name"] for bucket in s3.list_buckets()["Buckets"]}
        for bucket in buckets - set(resources.buckets.values()):
            _empty_bucket(s3, bucket)
            s3.delete_bucket(Bucket=bucket)
        for bucket in resources.buckets.values():
            _empty_bucket(s3, bucket)
        queues = set(sqs.list_queues().get("QueueUrls", []))
        for url in queues - set(resources.queues.values()):
            sqs.delete_queue(QueueUrl=url)
        # SQS allows one purge a minute per queue, and moto enforces it; the next
        # test's queue must be empty now.
        with mock.patch.dict(
            os.environ, {"MOTO_SQS_ENFORCE_STRICT_QUEUE_PURGE_BEHAVIOUR": "false"}
        ):
            for url in resources.queues.values():
                sqs.purge_queue(QueueUrl=url)
        listed = {
            secret["ARN"]: secret.get("SecretVersionsToStages", {})
            for secret in secrets.list_secrets()["SecretList"]
        }
        for arn in listed.keys() - self._secrets.keys():
            secrets.delete_secret(SecretId=arn, ForceDeleteWithoutRecovery=True)
        for arn, value in self._secrets.items():
            # A secret the test wrote to has another current version: write the value back.
            if "AWSCURRENT" not in listed[arn].get(self._versions[arn], []):
                put = secrets.put_secret_value(SecretId=arn, SecretString=value)
                self._versions[arn] = put["VersionId"]


def _empty_table(dynamodb: Any, table: str, keys: list[str]) -> None:
    projection = ", ".join(f"#k{index}" for index in range(len(keys)))
    names = {f"#k{index}": key for index, key in enumerate(keys)}
    for page in dynamodb.get_paginator("scan").paginate(
        TableName=table, ProjectionExpression=projection, ExpressionAttributeNames=names
    ):
        items = page["Items"]
        for start in range(0, len(items), 25):
            deletes = [{"DeleteRequest": {"Key": item}} for item in items[start : start + 25]]
            dynamodb.batch_write_item(RequestItems={table: deletes})


def _empty_bucket(s3: Any, bucket: str) -> None:
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        objects = [{"Key": entry["Key"]} for entry in page.get("Contents", [])]
        if objects:
            s3.delete_objects(Bucket=bucket, Delete={"Objects": objects})


@functools.cache
def boto3_session() -> boto3.Session:
    """One boto3 session for every test: its service models are loaded once.

    (Each client gets its own copy of the session's event hooks, so a test that
    registers one on its client does not reach the next test's clients.)
    """
    return boto3.Session()


@contextlib.contextmanager
def mocked_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``mock_aws()`` with fake credentials, on the shared boto3 session, and nothing in it."""
    fake_credentials(monkeypatch)
    # Code under test builds its clients on boto3's default session: the shared one.
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", boto3_session())
    with mock_aws(config={"core": {"reset_boto3_session": False}}):
        yield


@functools.cache
def template_account() -> TemplateAccount:
    """The test session's one ``TemplateAccount`` (a plain function: the ``aws``
    fixture is imported by name into conftest files, its helpers are not)."""
    return TemplateAccount()


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsResources]:
    """Moto with the template's resources, empty, and the functions' environment exported."""
    serialise_dynamodb(monkeypatch)
    account = template_account()
    with mocked_aws(monkeypatch):
        resources = account.lend()
        try:
            for name, value in resources.environment.items():
                monkeypatch.setenv(name, value)
            yield resources
        finally:
            account.take_back()


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@functools.cache
def _moto_server_endpoint() -> str:
    """A moto server on loopback for the whole test session (a daemon thread).

    Stopping one waits out its serve loop's half-second poll, so each test that
    wanted a server of its own paid that, and a start, again.
    """
    port = free_port()
    ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False).start()
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def moto_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A moto server over real HTTP on loopback, with the template's resources.

    Yields the environment a subprocess needs (endpoint, fake credentials, the
    functions' variables); this process gets the same through ``monkeypatch``.
    The server is the session's; each test finds it holding only the template's
    resources, freshly created.
    """
    endpoint = _moto_server_endpoint()
    # moto's backends are process-wide: start from none, whoever used them last.
    httpx.post(f"{endpoint}/moto-api/reset").raise_for_status()
    env = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    try:
        resources = create_resources(template_account().template)
        for name, value in resources.environment.items():
            monkeypatch.setenv(name, value)
        yield {**env, **resources.environment}
    finally:
        # And leave none for the next test's moto (a server, the local stack's emulator).
        httpx.post(f"{endpoint}/moto-api/reset")
