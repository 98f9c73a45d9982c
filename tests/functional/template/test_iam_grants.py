"""Least privilege, proven: every AWS call a handler makes is granted, every grant is called.

``tests/support/awscalls.py`` records each request a function's handler (or its
cold start) makes across the functional suite, as the IAM actions AWS authorises
it with; this test compares them with that function's ``Policies`` in
``template.yaml``. No call without a grant (it would fail in AWS with
AccessDenied), and no grant without a call (a permission the code never uses),
except the few listed in ``UNCALLED`` with the reason the suite cannot make them.

The comparison needs the whole functional suite's record: when this session ran
every functional test (``tests/conftest.py`` runs this one last), it uses what
was recorded here (under pytest-xdist, in every worker: it waits for the
functional tests the other workers run and adds up what each recorded);
otherwise it runs the functional suite in a subprocess first.

What the template's ``Policies`` do not hold is the platform's, not the code's:
SAM gives each function CloudWatch Logs (``AWSLambdaBasicExecutionRole``), X-Ray
(``Tracing: Active``) and, for the notifier's and the sweep workers' SQS triggers,
the poller's receive/delete on the queue (``SQSPollerPolicy``); the Lambda service calls
those, not the handlers. docs/deploying.md ("What the template creates") says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pytest

from tests.support import awscalls
from tests.support.aws import Tag, load_template
from tests.support.lambdas import ROOT

if TYPE_CHECKING:
    from pathlib import Path

THIS_TEST = "tests/functional/template/test_iam_grants.py"
# StreamFunction (a Condition, EnableStreamFunction) is checked as if deployed:
# tests/functional/api/test_stream_function.py drives its server.
FUNCTIONS = (
    "MessageFunction",
    "ResolveFunction",
    "NotifierFunction",
    "SweeperFunction",
    "SweepWorkerFunction",
    "StreamFunction",
)
TURN_RUNNERS = ("MessageFunction", "ResolveFunction", "SweepWorkerFunction", "StreamFunction")

# Granted, never called in the functional suite, and why. Each is still granted
# (checked below), and one the suite starts calling must leave this list.
UNCALLED: dict[tuple[str, str], str] = {
    **{
        (function, "lambda:InvokeFunction"): (
            "a turn's continuation invokes the message function asynchronously; moto "
            "cannot run a Lambda, so the functional tests drive continuations in memory "
            "(tests/contract/continuations/test_continuations_contract.py calls Invoke on moto)"
        )
        for function in ("MessageFunction", "ResolveFunction", "StreamFunction")
    },
    **{
        (function, "bedrock:InvokeModel"): (
            "only with BedrockModelArns; the functional suite runs the scripted model "
            "(tests/contract/models/test_model_adapters.py drives Converse)"
        )
        for function in TURN_RUNNERS
    },
    **{
        (function, f"secretsmanager:GetSecretValue@{awscalls.MODEL_SECRETS}"): (
            "only with ModelApiKeySecretArns: a provider's apiKey {secret: …}; the "
            "functional suite runs the scripted model, which has no key"
        )
        for function in TURN_RUNNERS
    },
    **{
        (function, action): (
            "values over a table item's size go to the bucket; the functional suite's "
            "turns are small (tests/contract/store/test_blobs_contract.py covers the adapter)"
        )
        for function in TURN_RUNNERS
        for action in ("s3:PutObject", "s3:GetObject")
    },
    ("NotifierFunction", "s3:GetObject"): (
        "a notification whose arguments are over a table item's size is read from the "
        "bucket; the functional suite's are small"
    ),
}


# The notifier's one Deny (template.yaml says why): outside a VPC, no ENI actions.
ENI_DENIED = {"Effect": "Deny", "Action": "ec2:*", "Resource": "*"}


def _grants(template: dict[str, Any]) -> dict[str, set[str]]:
    """Each function's granted actions, secret reads by which secret they may read."""
    secrets = {
        logical_id
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::SecretsManager::Secret"
    }
    granted: dict[str, set[str]] = defaultdict(set)
    for function in FUNCTIONS:
        policies = template["Resources"][function]["Properties"].get("Policies", [])
        for policy in policies:
            if isinstance(policy, Tag) and policy.name == "If":
                policy = policy.value[1]  # the granted branch; the other is AWS::NoValue
            assert isinstance(policy, dict) and set(policy) == {"Statement"}, (
                f"{function}: {policy!r} is not an explicit statement list (a SAM policy "
                "template grants what the code does not call)"
            )
            for statement in policy["Statement"]:
                if statement == ENI_DENIED:
                    continue  # grants nothing: takes SAM's VPC grant back outside a VPC
                assert statement["Effect"] == "Allow", statement
                actions = statement["Action"]
                for action in [actions] if isinstance(actions, str) else actions:
                    if action == "secretsmanager:GetSecretValue":
                        granted[function].add(f"{action}@{_secret(statement['Resource'], secrets)}")
                    else:
                        granted[function].add(action)
    return granted


def _secret(resource: Any, secrets: set[str]) -> str:
    """Which secret a GetSecretValue statement's Resource names (awscalls' names)."""
    if isinstance(resource, Tag) and resource.name == "Ref" and resource.value in secrets:
        return str(resource.value)
    if isinstance(resource, Tag) and resource.name == "Ref":
        assert resource.value == "ModelApiKeySecretArns", resource
        return awscalls.MODEL_SECRETS
    assert isinstance(resource, Tag) and resource.name == "Sub", resource
    assert str(resource.value).endswith("secret:${AWS::StackName}/*"), resource
    return awscalls.CHANNEL_SECRETS


def _recorded(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[set[tuple[str, str]], str]:
    """What the functional suite's handlers called, and how it was obtained."""
    if request.config.stash.get(awscalls.WHOLE_SUITE, False):
        shared = request.config.stash.get(awscalls.SHARED, None)
        if shared is None:
            return set(awscalls.record()), "this session's functional suite"
        # Under xdist: every worker's record, once the functional tests have all run.
        expected = request.config.stash[awscalls.FUNCTIONAL_TESTS]
        return set(awscalls.gather(shared, expected)), "this session's functional suite's workers"
    target = tmp_path / "calls.json"
    env = {**os.environ, awscalls.RECORD_VARIABLE: str(target)}
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/functional",
            "--deselect",
            THIS_TEST,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    tail = "\n".join(child.stdout.splitlines()[-15:])
    assert target.exists(), tail
    return set(awscalls.read(target)), f"a functional suite run in a subprocess:\n{tail}"


@pytest.mark.slow
def test_every_call_is_granted_and_every_grant_is_called(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    granted = _grants(load_template())
    called, source = _recorded(request, tmp_path)
    by_function: dict[str, set[str]] = defaultdict(set)
    for function, action in called:
        by_function[function].add(action)
    assert set(by_function) <= set(FUNCTIONS), by_function
    problems = []
    for function in FUNCTIONS:
        calls, grants = by_function[function], granted[function]
        assert calls, f"{function}: no handler of it ran ({source})"
        problems += [f"{function} calls {action} without a grant" for action in calls - grants]
        excused = {action for (name, action) in UNCALLED if name == function}
        problems += [
            f"{function} is granted {action} and never calls it"
            for action in grants - calls - excused
        ]
        problems += [
            f"{function}: UNCALLED lists {action}, which is not granted"
            for action in excused - grants
        ]
        problems += [
            f"{function}: UNCALLED lists {action}, which the suite calls: drop the exception"
            for action in excused & calls
        ]
    assert problems == [], "\n".join([*problems, f"(recorded by {source})"])


def test_the_message_function_may_not_read_the_signing_secret() -> None:
    # It signs nothing (links are signed where they are sent and verified where
    # they are clicked): a leaked message function must not be able to forge them.
    granted = _grants(load_template())
    assert "secretsmanager:GetSecretValue@ResumeSigningSecret" not in granted["MessageFunction"]
