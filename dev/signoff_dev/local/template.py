"""``template.yaml`` read as data, and every resource it declares created in an AWS emulator.

``load_template`` keeps CloudFormation's short-form functions (``!Ref``, ``!Sub``,
``!GetAtt``, …) as ``Tag`` markers. ``create_resources`` creates the template's
tables (keys, GSIs, TTL), buckets, queues (dead-letter queues first, then the
redrive policies naming them) and secrets (generated values) through boto3 — in
whatever account boto3 reaches: moto's in-process mock or a moto server behind
``AWS_ENDPOINT_URL`` — and resolves each function's environment (``Globals``
plus its own variables) the way CloudFormation would: a parameter's override or
default, a resource's physical name, ``!GetAtt X.Arn``, ``!Sub`` with pseudo
parameters. Nothing is listed by hand, so a resource added to the template
exists locally and in the tests without another edit.

``properties`` overrides resource properties for one run without editing the
template — the local stack shortens the notify queue's visibility timeout so a
failed notification is retried in seconds rather than minutes.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import boto3
import yaml

from signoff.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "ACCOUNT_ID",
    "REGION",
    "TEMPLATE_FILE",
    "AwsResources",
    "FunctionSpec",
    "Tag",
    "create_resources",
    "find_template",
    "load_template",
]

TEMPLATE_FILE: Final = "template.yaml"
REGION: Final = "us-east-1"
ACCOUNT_ID: Final = "123456789012"  # moto's default account
_SUB_VARIABLE: Final = re.compile(r"\$\{([^}]+)\}")


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


def find_template(start: Path | None = None) -> Path:
    """The project's ``template.yaml``: in ``start`` (default: the working folder) or above it.

    Falls back to the source checkout this package is imported from, so the
    tests and an editable install find the repository's template from anywhere.

    Raises:
        UsageError: no ``template.yaml`` in either place.
    """
    here = (start or Path.cwd()).resolve()
    # dev/signoff_dev/local/template.py → the repository root is three folders up
    checkout = Path(__file__).resolve().parents[3]
    for folder in (here, *here.parents, checkout):
        if (folder / TEMPLATE_FILE).is_file():
            return folder / TEMPLATE_FILE
    raise UsageError(
        f"no {TEMPLATE_FILE} in {here} or any folder above it: run this from the project folder"
    )


def load_template(path: Path | None = None) -> dict[str, Any]:
    """The template as plain data, its intrinsic functions kept as ``Tag`` markers.

    Raises:
        UsageError: ``path`` is None and no template is found (``find_template``).
        ConfigError: the file is not a YAML mapping.
    """
    path = path or find_template()
    # yaml.load with a SafeLoader subclass: safe, plus CloudFormation's tags
    loaded = yaml.load(path.read_text(encoding="utf-8"), Loader=_TemplateLoader)  # noqa: S506
    if not isinstance(loaded, dict):
        raise ConfigError(str(path), "", "must be a mapping of template sections")
    return loaded


@dataclass(frozen=True, kw_only=True)
class FunctionSpec:
    """One ``AWS::Serverless::Function``: its code, handler, timeout, environment and events."""

    logical_id: str
    physical_name: str
    code_uri: str  # relative to the template's folder
    handler: str  # module.function
    timeout: int
    environment: dict[str, str]
    events: dict[str, dict[str, Any]]  # event name → {Type, Properties}, properties resolved


@dataclass
class AwsResources:
    """Physical names of what the template declares, by logical id."""

    stack_name: str = "signoff"
    tables: dict[str, str] = field(default_factory=dict)
    buckets: dict[str, str] = field(default_factory=dict)
    queues: dict[str, str] = field(default_factory=dict)  # queue URLs
    queue_arns: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)  # secret ARNs
    functions: dict[str, FunctionSpec] = field(default_factory=dict)
    # Every function's variables together (Globals and each function's own).
    environment: dict[str, str] = field(default_factory=dict)

    def physical(self, logical_id: str) -> str:
        """What ``!Ref`` of a resource gives: table / bucket name, queue URL, secret ARN.

        Raises:
            KeyError: the template creates no such table, bucket, queue or secret.
        """
        for names in (self.tables, self.buckets, self.queues, self.secrets):
            if logical_id in names:
                return names[logical_id]
        raise KeyError(f"template.yaml creates no {logical_id}")

    def queue_url_of(self, arn: str) -> str:
        """The URL of the queue whose ARN is ``arn``.

        Raises:
            KeyError: no queue of the template has that ARN.
        """
        for logical_id, queue_arn in self.queue_arns.items():
            if queue_arn == arn:
                return self.queues[logical_id]
        raise KeyError(f"template.yaml creates no queue {arn}")


def create_resources(
    template: dict[str, Any] | None = None,
    *,
    stack_name: str = "signoff",
    parameters: Mapping[str, str] | None = None,
    properties: Mapping[str, Mapping[str, Any]] | None = None,
) -> AwsResources:
    """Create the template's tables, buckets, queues and secrets in the account boto3 reaches.

    Args:
        template: the loaded template (default: ``load_template()``).
        stack_name: what ``${AWS::StackName}`` stands for; prefixes every physical name.
        parameters: parameter values overriding the template's defaults.
        properties: resource properties overriding the template's, by logical id.

    Raises:
        UsageError: a parameter the template does not declare, or a value it does not allow.
        ConfigError: an intrinsic function this resolver cannot evaluate.
    """
    template = template if template is not None else load_template()
    found = AwsResources(stack_name=stack_name)
    resolver = _Resolver(template, found, _parameter_values(template, parameters or {}))
    declared = {
        logical_id: {**resource.get("Properties", {}), **(properties or {}).get(logical_id, {})}
        for logical_id, resource in template.get("Resources", {}).items()
    }
    kinds = {logical_id: r["Type"] for logical_id, r in template.get("Resources", {}).items()}

    def of(kind: str) -> dict[str, dict[str, Any]]:
        return {lid: props for lid, props in declared.items() if kinds[lid] == kind}

    _create_tables(of("AWS::DynamoDB::Table"), found)
    _create_buckets(of("AWS::S3::Bucket"), found)
    _create_queues(of("AWS::SQS::Queue"), found, resolver)
    _create_secrets(of("AWS::SecretsManager::Secret"), found)
    variables = template.get("Globals", {}).get("Function", {}).get("Environment", {})
    shared = variables.get("Variables", {})
    for logical_id, props in of("AWS::Serverless::Function").items():
        own = props.get("Environment", {}).get("Variables", {})
        if "AWS_LAMBDA_EXEC_WRAPPER" in own:
            # Run by the Lambda Web Adapter (the stream function), not the Python
            # runtime: the local gateway serves its route itself, from the same code.
            continue
        environment = {
            name: resolver.text(value, f"{logical_id}.Environment.{name}")
            for name, value in {**shared, **own}.items()
        }
        found.functions[logical_id] = FunctionSpec(
            logical_id=logical_id,
            physical_name=resolver.function_name(logical_id),
            code_uri=str(props["CodeUri"]),
            handler=str(props.get("Handler", "app.handler")),
            timeout=int(resolver.text(props.get("Timeout", 3), f"{logical_id}.Timeout")),
            environment=environment,
            events={
                name: {"Type": event["Type"], "Properties": resolver.lenient(event["Properties"])}
                for name, event in props.get("Events", {}).items()
            },
        )
        found.environment.update(environment)
    return found


def _parameter_values(template: dict[str, Any], overrides: Mapping[str, str]) -> dict[str, str]:
    declared: dict[str, Any] = template.get("Parameters", {})
    unknown = sorted(set(overrides) - set(declared))
    if unknown:
        raise UsageError(f"template.yaml declares no parameter {', '.join(unknown)}")
    values: dict[str, str] = {}
    for name, spec in declared.items():
        value = str(overrides.get(name, spec.get("Default", "")))
        allowed = [str(v) for v in spec.get("AllowedValues", [])]
        if allowed and value not in allowed:
            raise UsageError(f"parameter {name}={value!r}: allowed values are {', '.join(allowed)}")
        values[name] = value
    return values


class _Resolver:
    """Evaluates ``!Ref``, ``!GetAtt`` and ``!Sub`` against the parameters and what exists."""

    def __init__(
        self, template: dict[str, Any], found: AwsResources, parameters: dict[str, str]
    ) -> None:
        self._resources: dict[str, Any] = template.get("Resources", {})
        self._found = found
        self._parameters = parameters
        self._pseudo = {
            "AWS::StackName": found.stack_name,
            "AWS::Region": REGION,
            "AWS::AccountId": ACCOUNT_ID,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
        }

    def text(self, value: Any, where: str) -> str:
        """``value`` evaluated to a string.

        Raises:
            ConfigError: a function this resolver cannot evaluate (``where`` names it).
        """
        if not isinstance(value, Tag):
            return str(value)
        if value.name == "Ref":
            return self._ref(str(value.value), where)
        if value.name == "GetAtt":
            target = value.value if isinstance(value.value, str) else ".".join(value.value)
            return self._get_att(str(target), where)
        if value.name == "Sub":
            text, extra = (value.value, {}) if isinstance(value.value, str) else value.value
            return self._sub(str(text), extra, where)
        raise ConfigError(TEMPLATE_FILE, where, f"the local resolver cannot evaluate !{value.name}")

    def lenient(self, value: Any) -> Any:
        """``value`` with every function evaluated that can be; others kept as ``Tag``."""
        if isinstance(value, dict):
            return {key: self.lenient(inner) for key, inner in value.items()}
        if isinstance(value, list):
            return [self.lenient(inner) for inner in value]
        if isinstance(value, Tag):
            try:
                return self.text(value, "")
            except (ConfigError, KeyError):
                return value  # e.g. an !If in a schedule's State: left to the caller
        return value

    def function_name(self, logical_id: str) -> str:
        """A function's physical name: its ``FunctionName``, else ``<stack>-<logical id>``."""
        name = self._resources[logical_id].get("Properties", {}).get("FunctionName")
        if name is None:
            return f"{self._found.stack_name}-{logical_id}"
        return self.text(name, f"{logical_id}.FunctionName")

    def _ref(self, name: str, where: str) -> str:
        if name in self._parameters:
            return self._parameters[name]
        if name in self._pseudo:
            return self._pseudo[name]
        if name not in self._resources:
            raise ConfigError(TEMPLATE_FILE, where, f"!Ref {name}: no such parameter or resource")
        if self._resources[name]["Type"] == "AWS::Serverless::Function":
            return self.function_name(name)
        try:
            return self._found.physical(name)
        except KeyError:
            # Not emulated (an HTTP API, a layer, a log group): a stable stand-in name.
            return f"{self._found.stack_name}-{name}"

    def _get_att(self, target: str, where: str) -> str:
        logical_id, _, attribute = target.partition(".")
        found = self._found
        if logical_id in found.queues:
            by_attribute = {
                "Arn": found.queue_arns[logical_id],
                "QueueUrl": found.queues[logical_id],
                "QueueName": found.queues[logical_id].rsplit("/", 1)[-1],
            }
            if attribute in by_attribute:
                return by_attribute[attribute]
        if logical_id in found.tables and attribute == "Arn":
            return f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{found.tables[logical_id]}"
        if logical_id in found.buckets and attribute == "Arn":
            return f"arn:aws:s3:::{found.buckets[logical_id]}"
        raise ConfigError(
            TEMPLATE_FILE, where, f"the local resolver cannot evaluate !GetAtt {target}"
        )

    def _sub(self, text: str, extra: Mapping[str, Any], where: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"  # ${!Literal} is the escape for a literal ${
            if name in extra:
                return self.text(extra[name], where)
            if "." in name:
                return self._get_att(name, where)
            return self._ref(name, where)

        return _SUB_VARIABLE.sub(one, text)


def _create_tables(tables: dict[str, dict[str, Any]], found: AwsResources) -> None:
    client = boto3.client("dynamodb", region_name=REGION)
    for logical_id, props in tables.items():
        name = f"{found.stack_name}-{logical_id}"
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


def _create_buckets(buckets: dict[str, dict[str, Any]], found: AwsResources) -> None:
    client = boto3.client("s3", region_name=REGION)
    for logical_id in buckets:
        # Bucket names are lower-case only.
        name = f"{found.stack_name}-{logical_id}".lower()
        client.create_bucket(Bucket=name)
        found.buckets[logical_id] = name


def _queue_attribute(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _create_queues(
    queues: dict[str, dict[str, Any]], found: AwsResources, resolver: _Resolver
) -> None:
    client = boto3.client("sqs", region_name=REGION)
    # Dead-letter queues first: a redrive policy names its target's ARN.
    ordered = sorted(queues, key=lambda logical_id: "RedrivePolicy" in queues[logical_id])
    for logical_id in ordered:
        props = queues[logical_id]
        # Any: the template may carry attributes newer than the installed stubs list.
        attributes: dict[Any, str] = {
            name: _queue_attribute(
                resolver.text(value, f"{logical_id}.{name}") if isinstance(value, Tag) else value
            )
            for name, value in props.items()
            if name not in {"RedrivePolicy", "QueueName", "Tags"}
        }
        if "RedrivePolicy" in props:
            policy = dict(props["RedrivePolicy"])
            policy["deadLetterTargetArn"] = resolver.text(
                policy["deadLetterTargetArn"], f"{logical_id}.RedrivePolicy"
            )
            attributes["RedrivePolicy"] = json.dumps(policy)
        name = f"{found.stack_name}-{logical_id}"
        url = client.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        found.queues[logical_id] = url
        found.queue_arns[logical_id] = arn["Attributes"]["QueueArn"]


def _generated(spec: Mapping[str, Any]) -> str:
    """A value as ``GenerateSecretString`` would make it: length and punctuation honoured."""
    alphabet = string.ascii_letters + string.digits
    if not spec.get("ExcludePunctuation", False):
        alphabet += "!#$%&()*+,-.:;<=>?@[]^_{|}~"
    length = int(spec.get("PasswordLength", 32))
    return "".join(secrets.choice(alphabet) for _ in range(length))


def _create_secrets(declared: dict[str, dict[str, Any]], found: AwsResources) -> None:
    client = boto3.client("secretsmanager", region_name=REGION)
    for logical_id, props in declared.items():
        value = props.get("SecretString") or _generated(props.get("GenerateSecretString", {}))
        created = client.create_secret(
            Name=f"{found.stack_name}-{logical_id}", SecretString=str(value)
        )
        found.secrets[logical_id] = created["ARN"]
