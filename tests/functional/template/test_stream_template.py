"""The optional stream function, as CloudFormation deploys it with EnableStreamFunction on and off.

``cfn-lint`` and ``sam validate`` check the template as written; this test runs
SAM's own transform (``tests/support/sam_transform.py`` in ``.venv-sam``) with
the parameter overridden, then keeps the resources whose ``Condition`` holds for
those parameters: what a deploy creates.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.support.aws import TEMPLATE

SAM_PYTHON = TEMPLATE.parent / ".venv-sam" / "bin" / "python"
TRANSFORM = TEMPLATE.parent / "tests" / "support" / "sam_transform.py"
ADAPTER = "arn:${AWS::Partition}:lambda:${AWS::Region}:753240598075:layer:LambdaAdapterLayer"


def _deployed(**overrides: str) -> dict[str, Any]:
    """The transformed template's resources and outputs that exist for these parameters."""
    if not SAM_PYTHON.exists():
        pytest.skip(".venv-sam missing: `make template` makes it")
    done = subprocess.run(
        [
            str(SAM_PYTHON),
            str(TRANSFORM),
            str(TEMPLATE),
            *(f"{k}={v}" for k, v in overrides.items()),
        ],
        capture_output=True,
        text=True,
        env={"AWS_DEFAULT_REGION": "us-east-1", "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    template = json.loads(done.stdout)
    parameters = {
        name: str(overrides.get(name, spec.get("Default", "")))
        for name, spec in template["Parameters"].items()
    }
    conditions = template["Conditions"]

    def holds(condition: Any) -> bool:
        if isinstance(condition, str):
            return holds(conditions[condition])
        ((function, args),) = condition.items()
        if function == "Fn::Not":
            return not holds(args[0])
        if function == "Fn::Equals":
            left, right = (parameters[a["Ref"]] if isinstance(a, dict) else a for a in args)
            return bool(left == right)
        return True  # conditions on list parameters (Join); none guards the stream

    def exists(entry: dict[str, Any]) -> bool:
        return "Condition" not in entry or holds(entry["Condition"])

    return {
        part: {name: entry for name, entry in template[part].items() if exists(entry)}
        for part in ("Resources", "Outputs")
    }


def _of_type(deployed: dict[str, Any], kind: str) -> dict[str, Any]:
    return {k: v for k, v in deployed["Resources"].items() if v["Type"] == kind}


def test_by_default_no_stream_function_is_deployed() -> None:
    deployed = _deployed()
    assert "StreamFunction" not in deployed["Resources"]
    assert _of_type(deployed, "AWS::Lambda::Url") == {}
    assert "StreamUrl" not in deployed["Outputs"]
    # And the stack's five functions are all there (message, resolve, notifier, and
    # the sweep's planner and worker)
    assert set(_of_type(deployed, "AWS::Lambda::Function")) == {
        "MessageFunction",
        "ResolveFunction",
        "NotifierFunction",
        "SweeperFunction",
        "SweepWorkerFunction",
    }


@pytest.mark.parametrize(("architecture", "layer"), [("x86_64", "X86"), ("arm64", "Arm64")])
def test_enabled_the_stream_function_streams_on_a_function_url_through_the_web_adapter(
    architecture: str, layer: str
) -> None:
    deployed = _deployed(EnableStreamFunction="true", Architecture=architecture)
    function = deployed["Resources"]["StreamFunction"]["Properties"]
    # The adapter's wrapper runs run.sh, which serves the stream; the engine and
    # agents layers stay (SAM appends the function's Layers to the Globals ones).
    assert function["Handler"] == "run.sh"
    engine, agents, adapter = function["Layers"]
    assert engine["Ref"].startswith("EngineLayer") and agents["Ref"].startswith("AgentsLayer")
    condition, arm64, x86 = adapter["Fn::If"]
    assert condition == "OnArm64"
    chosen = arm64 if architecture == "arm64" else x86
    # the version awslabs/aws-lambda-web-adapter's README lists for both architectures
    assert chosen["Fn::Sub"] == f"{ADAPTER}{layer}:26"
    variables = function["Environment"]["Variables"]
    assert variables["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert variables["AWS_LWA_INVOKE_MODE"] == "response_stream"
    assert variables["AWS_LWA_READINESS_CHECK_PATH"] == "/healthz"
    assert variables["SIGNOFF_TABLE"] == {"Ref": "SignoffTable"}  # the Globals' too
    # A function URL in RESPONSE_STREAM mode, open to callers (the server checks the key)
    (url,) = _of_type(deployed, "AWS::Lambda::Url").values()
    assert url["Properties"] == {
        "TargetFunctionArn": {"Ref": "StreamFunction"},
        "AuthType": "NONE",
        "InvokeMode": "RESPONSE_STREAM",
    }
    public = [
        p["Properties"]["Action"]
        for p in _of_type(deployed, "AWS::Lambda::Permission").values()
        if p["Properties"]["FunctionName"] == {"Ref": "StreamFunction"}
    ]
    assert sorted(public) == ["lambda:InvokeFunction", "lambda:InvokeFunctionUrl"]
    assert deployed["Outputs"]["StreamUrl"]["Value"] == {
        "Fn::GetAtt": ["StreamFunctionUrl", "FunctionUrl"]
    }
