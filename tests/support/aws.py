"""AWS resources for tests, created in moto from ``template.yaml`` so they cannot drift.

``create_resources`` reads every table, bucket and queue the template declares and
creates it with the template's own keys, indexes, TTL and redrive policy; the
``aws`` fixture does that inside ``mock_aws`` and exports the functions'
environment variables (``Globals.Function.Environment``) the way Lambda would.
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

import json
import secrets
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import boto3
import httpx
import pytest
import yaml
from moto import mock_aws
from moto.core.botocore_stubber import BotocoreStubber
from moto.server import ThreadedMotoServer

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
REGION = "us-east-1"
_PREFIX = "signoff-test"


@dataclass(frozen=True)
class Tag:
    """A CloudFormation short-form function (``!Ref``, ``!GetAtt``, ``!Sub``, …) as a marker."""

    name: str
    value: Any


class _TemplateLoader(yaml.SafeLoader):
    """A safe loader that keeps CloudFormation's ``!`` tags instead of refusing them."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Tag:
    if isinstance(node, yaml.ScalarNode):
        return Tag(suffix, loader.construct_scalar(node))
    if isinstance(node, yaml.SequenceNode):
        return Tag(suffix, loader.construct_sequence(node, deep=True))
    assert isinstance(node, yaml.MappingNode)
    return Tag(suffix, loader.construct_mapping(node, deep=True))


_TemplateLoader.add_multi_constructor("!", _tag)


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    """The template as plain data, its intrinsic functions kept as ``Tag`` markers."""
    # yaml.load with a SafeLoader subclass: safe, plus CloudFormation's tags
    loaded: dict[str, Any] = yaml.load(path.read_text(), Loader=_TemplateLoader)
    return loaded


@dataclass
class AwsResources:
    """Physical names of what the template declares, by logical id."""

    tables: dict[str, str] = field(default_factory=dict)
    buckets: dict[str, str] = field(default_factory=dict)
    queues: dict[str, str] = field(default_factory=dict)  # queue URLs
    queue_arns: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)  # secret ARNs
    environment: dict[str, str] = field(default_factory=dict)

    def physical(self, logical_id: str) -> str:
        """What ``!Ref`` of a resource gives: table / bucket name, queue URL, secret ARN."""
        for names in (self.tables, self.buckets, self.queues, self.secrets):
            if logical_id in names:
                return names[logical_id]
        raise KeyError(f"template.yaml creates no {logical_id}")


def _resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {
        logical_id: resource.get("Properties", {})
        for logical_id, resource in template.get("Resources", {}).items()
        if resource["Type"] == kind
    }


def _create_tables(template: dict[str, Any], found: AwsResources) -> None:
    client = boto3.client("dynamodb", region_name=REGION)
    for logical_id, props in _resources(template, "AWS::DynamoDB::Table").items():
        name = f"{_PREFIX}-{logical_id}"
        args: dict[str, Any] = {
            "TableName": name,
            "AttributeDefinitions": props["AttributeDefinitions"],
            "KeySchema": props["KeySchema"],
            "BillingMode": props.get("BillingMode", "PROVISIONED"),
        }
        if "GlobalSecondaryIndexes" in props:
            args["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
        client.create_table(**args)
        ttl = props.get("TimeToLiveSpecification")
        if ttl:
            client.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={
                    "AttributeName": ttl["AttributeName"],
                    "Enabled": bool(ttl["Enabled"]),
                },
            )
        found.tables[logical_id] = name


def _create_buckets(template: dict[str, Any], found: AwsResources) -> None:
    client = boto3.client("s3", region_name=REGION)
    for logical_id in _resources(template, "AWS::S3::Bucket"):
        name = f"{_PREFIX}-{logical_id.lower()}"
        client.create_bucket(Bucket=name)
        found.buckets[logical_id] = name


def _queue_attribute(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _create_queues(template: dict[str, Any], found: AwsResources) -> None:
    client = boto3.client("sqs", region_name=REGION)
    queues = _resources(template, "AWS::SQS::Queue")
    # Dead-letter queues first: a redrive policy names its target's ARN.
    ordered = sorted(queues, key=lambda logical_id: "RedrivePolicy" in queues[logical_id])
    for logical_id in ordered:
        props = dict(queues[logical_id])
        attributes = {
            name: _queue_attribute(value)
            for name, value in props.items()
            if name not in {"RedrivePolicy", "QueueName", "Tags"}
        }
        if "RedrivePolicy" in props:
            policy = dict(props["RedrivePolicy"])
            policy["deadLetterTargetArn"] = _resolve(policy["deadLetterTargetArn"], found, {})
            attributes["RedrivePolicy"] = json.dumps(policy)
        url = client.create_queue(QueueName=f"{_PREFIX}-{logical_id}", Attributes=attributes)[
            "QueueUrl"
        ]
        arn = client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        found.queues[logical_id] = url
        found.queue_arns[logical_id] = arn["Attributes"]["QueueArn"]


def _resolve(value: Any, found: AwsResources, parameters: dict[str, Any]) -> str:
    if not isinstance(value, Tag):
        return str(value)
    if value.name == "Ref" and value.value in parameters:
        return str(parameters[value.value].get("Default", ""))
    if value.name == "Ref":
        return found.physical(value.value)
    if value.name == "GetAtt" and str(value.value).endswith(".Arn"):
        return found.queue_arns[str(value.value).removesuffix(".Arn")]
    if value.name == "Sub" and isinstance(value.value, str):
        return value.value.replace("${AWS::StackName}", _PREFIX)
    raise NotImplementedError(f"tests/support/aws.py cannot resolve !{value.name} {value.value}")


def _create_secrets(template: dict[str, Any], found: AwsResources) -> None:
    client = boto3.client("secretsmanager", region_name=REGION)
    for logical_id, properties in _resources(template, "AWS::SecretsManager::Secret").items():
        length = int(properties.get("GenerateSecretString", {}).get("PasswordLength", 48))
        created = client.create_secret(
            Name=f"{_PREFIX}-{logical_id}", SecretString=secrets.token_urlsafe(length)[:length]
        )
        found.secrets[logical_id] = created["ARN"]


def create_resources(template: dict[str, Any] | None = None) -> AwsResources:
    """Create the template's tables, buckets and queues in the current (mocked) account."""
    template = template if template is not None else load_template()
    found = AwsResources()
    _create_tables(template, found)
    _create_buckets(template, found)
    _create_queues(template, found)
    _create_secrets(template, found)
    variables = dict(
        template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    )
    # Every function's own variables too (the signing secret, the continue function).
    for function in _resources(template, "AWS::Serverless::Function").values():
        variables.update(function.get("Environment", {}).get("Variables", {}))
    parameters = template.get("Parameters", {})
    found.environment = {
        name: _resolve(value, found, parameters) for name, value in variables.items()
    }
    return found


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
