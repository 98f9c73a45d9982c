"""SnapStart (EnableSnapStart) on and off, as CloudFormation deploys it.

SnapStart runs on published versions only, so the five functions that run at init
what the snapshot keeps (message, resolve, notifier, sweeper, sweep worker) always
publish a version behind the alias ``live``; SAM points their events at it (the HTTP
API's integrations and permissions, the queues' mappings, the schedules' targets),
and the continuations name it. Only ``SnapStart.ApplyOn`` follows the parameter.
The stream function keeps to ``$LATEST`` and never snapshots: its server runs under
the Web Adapter, where the python runtime's restore hooks never run.

SAM hashes a function's properties into its version's logical id before parameters
are resolved (aws/serverless-application-model#1640), so a parameter change alone
would leave the alias on a version with the old value: each version's description
holds the value of every parameter its configuration takes, and a changed
description is a new version. These tests run SAM's transform with the parameter
on and off (``Deployed``, resolved as CloudFormation would), read the template as
written for what the description must name, and run cfn-lint and ``sam validate
--lint`` both ways.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.functional.template.test_stream_template import SAM_PYTHON, TRANSFORM
from tests.functional.template.test_vpc_template import Deployed, _run
from tests.support.aws import TEMPLATE, Tag, load_template

ROOT = TEMPLATE.parent
ALIAS = "live"
ALIASED = (
    "MessageFunction",
    "ResolveFunction",
    "NotifierFunction",
    "SweeperFunction",
    "SweepWorkerFunction",
)
# The resources that invoke a function: each must name the alias.
INVOKERS = (
    "AWS::Lambda::Permission",
    "AWS::Lambda::EventSourceMapping",
    "AWS::Events::Rule",
    "AWS::ApiGatewayV2::Api",
    "AWS::Lambda::Url",
)
# Function properties that are no part of a version's configuration: the role's
# policies apply to every version at once, the events are resources of their own,
# the version's description is where the values go.
NOT_VERSIONED = {"Events", "Policies", "VersionDescription", "FunctionName"}

pytestmark = pytest.mark.slow

SWITCH = ["true", "false"]


def _alias(deployed: Deployed, function: str) -> dict[str, Any]:
    resource: dict[str, Any] = deployed.template["Resources"][f"{function}Alias{ALIAS}"]
    return resource


def _version_id(deployed: Deployed, function: str) -> str:
    (logical_id,) = [
        name
        for name, resource in deployed.template["Resources"].items()
        if resource["Type"] == "AWS::Lambda::Version"
        and resource["Properties"]["FunctionName"] == {"Ref": function}
    ]
    return logical_id


@pytest.mark.parametrize("enabled", SWITCH)
def test_snapstart_follows_the_parameter_on_versions_always_published_behind_live(
    enabled: str,
) -> None:
    deployed = Deployed(EnableSnapStart=enabled, EnableStreamFunction="true")
    for function in ALIASED:
        properties = deployed.function(function)
        # SnapStart on the published versions, or none
        wanted = "PublishedVersions" if enabled == "true" else "None"
        assert properties["SnapStart"] == {"ApplyOn": wanted}, function
        # Always a version behind the alias, deleted when replaced (a kept SnapStart
        # version is billed for its cached snapshot)
        version = _version_id(deployed, function)
        alias = _alias(deployed, function)["Properties"]
        assert alias["Name"] == ALIAS
        assert alias["FunctionVersion"] == {"Fn::GetAtt": [version, "Version"]}
        assert deployed.template["Resources"][version]["DeletionPolicy"] == "Delete"
        # whose description starts with SnapStart's setting (a change publishes a new one)
        properties = deployed.template["Resources"][version]["Properties"]
        assert _sub(deployed, properties["Description"]).startswith(f"{enabled} "), function
    # The stream function: no alias, no SnapStart
    stream = deployed.function("StreamFunction")
    assert "SnapStart" not in stream
    assert f"StreamFunctionAlias{ALIAS}" not in deployed.template["Resources"]


@pytest.mark.parametrize("enabled", SWITCH)
def test_every_event_source_invokes_the_alias_and_never_the_function(enabled: str) -> None:
    deployed = Deployed(EnableSnapStart=enabled, EnableStreamFunction="true")
    invokers = {
        name: json.dumps(resource)
        for name, resource in deployed.template["Resources"].items()
        if resource["Type"] in INVOKERS
    }
    for function in ALIASED:
        # what names the function itself: !Ref F (its name), !GetAtt F.Arn, ${F.Arn}
        itself = [
            json.dumps({"Ref": function}),
            json.dumps({"Fn::GetAtt": [function, "Arn"]}),
            "${" + function + ".Arn}",
        ]
        alias = f"{function}Alias{ALIAS}"
        named = [name for name, text in invokers.items() if alias in text]
        assert named, f"nothing invokes {function}'s alias"
        for name, text in invokers.items():
            assert not any(form in text for form in itself), f"{name} invokes {function}"
    # The function URL and its permissions are the stream function's own, unaliased
    url = deployed.template["Resources"]["StreamFunctionUrl"]["Properties"]
    assert url["TargetFunctionArn"] == {"Ref": "StreamFunction"}


def test_each_kind_of_event_reaches_the_alias() -> None:
    resources = Deployed().template["Resources"]

    def of(kind: str) -> list[dict[str, Any]]:
        return [r["Properties"] for r in resources.values() if r["Type"] == kind]

    # the queues' mappings
    mappings = {json.dumps(p["FunctionName"]) for p in of("AWS::Lambda::EventSourceMapping")}
    assert mappings == {
        json.dumps({"Ref": f"{f}Alias{ALIAS}"}) for f in ("NotifierFunction", "SweepWorkerFunction")
    }
    # the schedules' targets
    targets = {json.dumps(t["Arn"]) for p in of("AWS::Events::Rule") for t in p["Targets"]}
    assert targets == {
        json.dumps({"Ref": f"{f}Alias{ALIAS}"}) for f in ("MessageFunction", "SweeperFunction")
    }
    # the HTTP API's integrations
    body = json.dumps(resources["HttpApi"]["Properties"])
    integrations = set(re.findall(r"\$\{(\w+)\}/invocations", body))
    assert integrations == {f"{f}Alias{ALIAS}" for f in ("MessageFunction", "ResolveFunction")}


def _parameters_in(node: Any, conditions: dict[str, Any]) -> set[str]:
    """The parameters ``node`` (the template as written) refers to, conditions followed."""
    found: set[str] = set()
    if isinstance(node, Tag):
        if node.name == "Ref" and isinstance(node.value, str):
            found.add(node.value)
        elif node.name == "Sub":
            text, extra = (node.value, {}) if isinstance(node.value, str) else node.value
            found |= set(re.findall(r"\$\{([A-Za-z0-9]+)\}", text)) - set(extra)
            found |= _parameters_in(extra, conditions)
        elif node.name == "If":
            condition, *branches = node.value
            found |= _parameters_in(conditions[condition], conditions)
            found |= _parameters_in(branches, conditions)
        elif node.name == "Condition":
            found |= _parameters_in(conditions[node.value], conditions)
        else:
            found |= _parameters_in(node.value, conditions)
    elif isinstance(node, dict):
        for value in node.values():
            found |= _parameters_in(value, conditions)
    elif isinstance(node, list):
        for value in node:
            found |= _parameters_in(value, conditions)
    return found


@pytest.mark.parametrize("function", ALIASED)
def test_a_version_is_published_when_any_parameter_its_configuration_takes_changes(
    function: str,
) -> None:
    template = load_template()
    parameters = set(template["Parameters"])
    conditions = template["Conditions"]
    properties = template["Resources"][function]["Properties"]
    # The configuration a version keeps: the function's properties and the Globals'
    merged = {**template["Globals"]["Function"], **properties}
    configured = {key: value for key, value in merged.items() if key not in NOT_VERSIONED}
    taken = _parameters_in(configured, conditions) & parameters
    described = _parameters_in(properties["VersionDescription"], conditions) & parameters
    # Every parameter the configuration takes is in the version's description
    assert taken - described == set(), f"{function}'s VersionDescription lacks them"
    assert "EnableSnapStart" in taken
    # A new layer version or any other property change publishes one too
    assert properties["AutoPublishAlias"] == ALIAS
    assert properties["AutoPublishAliasAllProperties"] is True
    for layer in ("EngineLayer", "AgentsLayer"):
        assert template["Resources"][layer]["Properties"]["PublishLambdaVersion"] is True


def test_the_version_descriptions_fit_lambdas_256_characters_with_long_values() -> None:
    # Given long values: the longest Environment, large numbers, a VPC of three
    # subnets and two security groups
    subnets = ",".join(f"subnet-0a1b2c3d4e5f6071{n}" for n in range(3))
    groups = ",".join(f"sg-0a1b2c3d4e5f6071{n}" for n in range(2))
    deployed = Deployed(
        Environment="e" * 64,
        EnableSnapStart="false",
        MessageTimeout="900",
        ResolveTimeout="900",
        SweeperTimeout="900",
        RetentionDays="365",
        MaxConcurrentRuns="100000",
        MaxConcurrentRunsPerTenant="100000",
        RunSlotWaitSeconds="3600",
        SweepShards="1000",
        ListingShards="1000",
        SessionLeaseMs="3600000",
        ApplicationLogLevel="TRACE",
        SystemLogLevel="DEBUG",
        VpcSubnetIds=subnets,
        VpcSecurityGroupIds=groups,
    )
    assert deployed.template["Parameters"]["Environment"]["MaxLength"] == 64
    for function in ALIASED:
        version = deployed.template["Resources"][_version_id(deployed, function)]
        description = _sub(deployed, version["Properties"]["Description"])
        # Then each fits (Lambda refuses a longer one)
        assert len(description) <= 256, (function, len(description), description)
        assert "e" * 64 in description


def _sub(deployed: Deployed, node: Any) -> str:
    """A ``Fn::Sub`` of the transformed template, with parameters' values."""
    text, extra = (node["Fn::Sub"], {}) if isinstance(node["Fn::Sub"], str) else node["Fn::Sub"]
    values = {**deployed.parameters, **{k: deployed.value(v) for k, v in extra.items()}}
    return re.sub(r"\$\{([A-Za-z0-9]+)\}", lambda m: str(values[m.group(1)]), text)


def test_continuations_invoke_the_message_functions_alias() -> None:
    deployed = Deployed(EnableStreamFunction="true")
    for function in (*ALIASED, "StreamFunction"):
        variables = deployed.function(function)["Environment"]["Variables"]
        if "SIGNOFF_CONTINUE_FUNCTION" in variables:
            assert variables["SIGNOFF_CONTINUE_FUNCTION"] == {
                "Fn::Sub": "${AWS::StackName}-message:live"
            }, function


@pytest.mark.parametrize("enabled", SWITCH, ids=["snapstart-on", "snapstart-off"])
def test_cfn_lint_and_sam_validate_pass_with_snapstart_on_and_off(
    enabled: str, tmp_path: Path
) -> None:
    sam = ROOT / ".venv-sam" / "bin" / "sam"
    if not sam.exists() or not SAM_PYTHON.exists():
        pytest.skip(".venv-sam missing: `make template` makes it")
    # Given the template with EnableSnapStart's default set (sam validate takes no
    # parameter overrides)
    text = TEMPLATE.read_text(encoding="utf-8")
    unset = '  EnableSnapStart:\n    Type: String\n    Default: "false"\n'
    assert unset in text
    copy = tmp_path / "template.yaml"
    copy.write_text(text.replace(unset, unset.replace('"false"', f'"{enabled}"')))
    # When cfn-lint reads it as written and as SAM transforms it, and sam validate lints it
    cfn_lint = str(Path(sys.executable).parent / "cfn-lint")
    _run([cfn_lint, str(copy)], tmp_path)
    transformed = tmp_path / "transformed.json"
    transformed.write_text(
        _run([str(SAM_PYTHON), str(TRANSFORM), str(copy), "EnableStreamFunction=true"], tmp_path)
    )
    _run([cfn_lint, str(transformed)], tmp_path)
    out = _run([str(sam), "validate", "--lint", "--region", "us-east-1", "-t", str(copy)], tmp_path)
    # Then all pass, SnapStart as the parameter says
    assert "is a valid SAM Template" in out
    deployed = json.loads(transformed.read_text())
    assert deployed["Parameters"]["EnableSnapStart"]["Default"] == enabled
