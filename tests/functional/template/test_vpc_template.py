"""The notifier in a VPC (VpcSubnetIds, VpcSecurityGroupIds), as CloudFormation deploys it.

The notifier is the one function that writes rows to a redis or database channel
(the others build no such channel: the resolve function builds Slack and Lark
only, the sweep re-enqueues), so it alone goes into the operator's VPC, and its
role may create network interfaces only then. SAM attaches
``AWSLambdaVPCAccessExecutionRole`` for any ``VpcConfig``, an ``!If`` whose condition
is false included, so outside a VPC the template denies the role every EC2 action.

These run SAM's own transform with and without the parameters (what ``sam deploy``
hands CloudFormation) and resolve the conditions for them; cfn-lint and ``sam
validate --lint`` check the template both ways.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.functional.template.test_stream_template import SAM_PYTHON, TRANSFORM
from tests.support.aws import TEMPLATE

ROOT = TEMPLATE.parent
SUBNETS = "subnet-0a1b2c3d4e5f60718,subnet-0b1c2d3e4f5061728"
SECURITY_GROUPS = "sg-0a1b2c3d4e5f60718"
IN_VPC = {"VpcSubnetIds": SUBNETS, "VpcSecurityGroupIds": SECURITY_GROUPS}
VPC_ROLE = "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"
NO_VALUE = {"Ref": "AWS::NoValue"}

pytestmark = pytest.mark.slow


class Deployed:
    """The transformed template for ``overrides``, resolved as CloudFormation would."""

    def __init__(self, **overrides: str) -> None:
        if not SAM_PYTHON.exists():
            pytest.skip(".venv-sam missing: `make template` makes it")
        done = subprocess.run(
            [str(SAM_PYTHON), str(TRANSFORM), str(TEMPLATE)]
            + [f"{k}={v}" for k, v in overrides.items()],
            capture_output=True,
            text=True,
            env={"AWS_DEFAULT_REGION": "us-east-1", "PATH": "/usr/bin:/bin"},
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        self.template: dict[str, Any] = json.loads(done.stdout)
        self.parameters: dict[str, Any] = {}
        for name, spec in self.template["Parameters"].items():
            value = str(overrides.get(name, spec.get("Default", "")))
            lists = spec["Type"] == "CommaDelimitedList"
            self.parameters[name] = value.split(",") if lists else value

    def value(self, node: Any) -> Any:
        """``node`` with Ref (parameters), Fn::Join, Fn::If and AWS::NoValue resolved."""
        if isinstance(node, list):
            return [v for v in (self.value(item) for item in node) if v is not NO_VALUE]
        if not isinstance(node, dict):
            return node
        if node == NO_VALUE:
            return NO_VALUE
        if set(node) == {"Ref"} and node["Ref"] in self.parameters:
            return self.parameters[node["Ref"]]
        if set(node) == {"Fn::Join"}:
            separator, items = node["Fn::Join"]
            return separator.join(self.value(items))
        if set(node) == {"Fn::If"}:
            condition, yes, no = node["Fn::If"]
            return self.value(yes if self.holds(condition) else no)
        resolved = {key: self.value(item) for key, item in node.items()}
        return {key: item for key, item in resolved.items() if item is not NO_VALUE}

    def holds(self, condition: Any) -> bool:
        if isinstance(condition, str):
            return self.holds(self.template["Conditions"][condition])
        ((function, args),) = condition.items()
        if function == "Condition":
            return self.holds(args)
        if function == "Fn::Not":
            return not self.holds(args[0])
        if function == "Fn::Equals":
            left, right = (self.value(arg) for arg in args)
            return bool(left == right)
        raise AssertionError(f"no rule for {function} in this test's resolver: add one")

    def function(self, logical_id: str) -> dict[str, Any]:
        resolved: dict[str, Any] = self.value(self.template["Resources"][logical_id]["Properties"])
        return resolved

    def functions(self) -> list[str]:
        return [
            logical_id
            for logical_id, resource in self.template["Resources"].items()
            if resource["Type"] == "AWS::Lambda::Function"
            and self.holds(resource.get("Condition", {"Fn::Equals": ["", ""]}))
        ]

    def role_of(self, logical_id: str) -> dict[str, Any]:
        role = self.function(logical_id)["Role"]["Fn::GetAtt"][0]
        return self.function(role)

    def statements(self, logical_id: str) -> list[dict[str, Any]]:
        role = self.role_of(logical_id)
        return [s for policy in role["Policies"] for s in policy["PolicyDocument"]["Statement"]]

    def rules_hold(self) -> list[str]:
        """The template's Rules whose assertions fail for these parameters, by name."""
        failed = []
        for name, rule in self.template.get("Rules", {}).items():
            applies = "RuleCondition" not in rule or self._rule(rule["RuleCondition"])
            if applies and not all(self._rule(a["Assert"]) for a in rule["Assertions"]):
                failed.append(name)
        return failed

    def _rule(self, node: dict[str, Any]) -> bool:
        ((function, args),) = node.items()
        if function == "Fn::Not":
            return not self._rule(args[0])
        if function == "Fn::Contains":
            values, wanted = args
            return bool(wanted in self.value(values))
        raise AssertionError(f"no rule function {function} in this test's resolver: add one")


def test_by_default_no_function_is_in_a_vpc_and_the_notifier_may_make_no_network_interface() -> (
    None
):
    deployed = Deployed()
    # No function has a VpcConfig
    assert [f for f in deployed.functions() if "VpcConfig" in deployed.function(f)] == []
    # And the notifier's role, which SAM gives the VPC policy for its (unused) VpcConfig,
    # is denied every EC2 action, so it can create no network interface
    assert VPC_ROLE in deployed.role_of("NotifierFunction")["ManagedPolicyArns"]
    denied = [s for s in deployed.statements("NotifierFunction") if s["Effect"] == "Deny"]
    assert denied == [{"Effect": "Deny", "Action": "ec2:*", "Resource": "*"}]
    # And no function but the notifier has the VPC policy at all
    for logical_id in set(deployed.functions()) - {"NotifierFunction"}:
        assert VPC_ROLE not in deployed.role_of(logical_id)["ManagedPolicyArns"], logical_id


def test_with_subnets_and_security_groups_the_notifier_alone_runs_in_the_vpc() -> None:
    deployed = Deployed(**IN_VPC)
    # The notifier runs in the subnets with the security groups
    assert deployed.function("NotifierFunction")["VpcConfig"] == {
        "SubnetIds": SUBNETS.split(","),
        "SecurityGroupIds": [SECURITY_GROUPS],
    }
    # And its role may manage its network interfaces: the VPC policy, nothing denied
    assert VPC_ROLE in deployed.role_of("NotifierFunction")["ManagedPolicyArns"]
    statements = deployed.statements("NotifierFunction")
    assert [s for s in statements if s["Effect"] == "Deny"] == []
    # And every other function stays outside the VPC, without the VPC policy
    for logical_id in set(deployed.functions()) - {"NotifierFunction"}:
        assert "VpcConfig" not in deployed.function(logical_id), logical_id
        assert VPC_ROLE not in deployed.role_of(logical_id)["ManagedPolicyArns"], logical_id


@pytest.mark.parametrize(
    ("overrides", "failed"),
    [
        ({}, []),
        (IN_VPC, []),
        ({"VpcSubnetIds": SUBNETS}, ["VpcSettingsTogether"]),
        ({"VpcSecurityGroupIds": SECURITY_GROUPS}, ["VpcSecurityGroupsNeedSubnets"]),
    ],
)
def test_the_template_rules_take_both_vpc_parameters_or_neither(
    overrides: dict[str, str], failed: list[str]
) -> None:
    # Half a VPC setting fails the deploy before anything changes (CloudFormation Rules)
    assert Deployed(**overrides).rules_hold() == failed


def _run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "SAM_CLI_TELEMETRY": "0", "AWS_DEFAULT_REGION": "us-east-1"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{command[:2]}:\n{done.stdout[-4000:]}{done.stderr[-4000:]}"
    return done.stdout


@pytest.mark.parametrize("in_vpc", [False, True], ids=["without-vpc", "in-vpc"])
def test_cfn_lint_and_sam_validate_pass_with_and_without_the_vpc_parameters(
    in_vpc: bool, tmp_path: Path
) -> None:
    sam = ROOT / ".venv-sam" / "bin" / "sam"
    if not sam.exists():
        pytest.skip(".venv-sam missing: `make template` makes it")
    # Given the template with the VPC parameters' defaults set (neither tool takes a
    # CommaDelimitedList override: cfn-lint's --parameters reads it as one string,
    # sam validate has no overrides); neither reads the folders its paths name
    text = TEMPLATE.read_text(encoding="utf-8")
    for name, value in IN_VPC.items() if in_vpc else ():
        unset = f'  {name}:\n    Type: CommaDelimitedList\n    Default: ""\n'
        assert unset in text, name
        text = text.replace(unset, unset.replace('""', f'"{value}"'))
    copy = tmp_path / "template.yaml"
    copy.write_text(text, encoding="utf-8")
    # When cfn-lint reads it as written and as SAM transforms it, and sam validate lints it
    # the test run's own virtualenv (CI's is not .venv)
    cfn_lint = str(Path(sys.executable).parent / "cfn-lint")
    _run([cfn_lint, str(copy)], tmp_path)
    transformed = tmp_path / "transformed.json"
    transformed.write_text(_run([str(SAM_PYTHON), str(TRANSFORM), str(copy)], tmp_path))
    _run([cfn_lint, str(transformed)], tmp_path)
    out = _run([str(sam), "validate", "--lint", "--region", "us-east-1", "-t", str(copy)], tmp_path)
    # Then all pass, on the notifier as the parameters place it
    assert "is a valid SAM Template" in out
    deployed = json.loads(transformed.read_text())
    config = deployed["Resources"]["NotifierFunction"]["Properties"]["VpcConfig"]
    assert config["Fn::If"][0] == "InVpc"
    defaults = {name: deployed["Parameters"][name]["Default"] for name in IN_VPC}
    assert defaults == (IN_VPC if in_vpc else dict.fromkeys(IN_VPC, ""))
