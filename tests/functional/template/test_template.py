"""``template.yaml``'s conventions, checked: events for every trigger, settings, IAM scope.

The template is read with ``tests.support.aws.load_template`` (CloudFormation's ``!``
tags kept as ``Tag`` markers). ``cfn-lint``, ``sam validate --lint`` and ``sam build``
run in ``make template``; these tests hold what those tools cannot know.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import pytest
from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

from signoff.settings.variables import MAX_SHARDS
from tests.support.aws import TEMPLATE, Tag, load_template

if TYPE_CHECKING:
    from pathlib import Path

ROOT = TEMPLATE.parent
EVENTS = ROOT / "events"
EVENT_FILES = sorted(EVENTS.glob("*.json"))

# What the tests substitute in events/ (see events/README.md); anything else is literal.
PLACEHOLDERS = frozenset({"PENDING_ID", "SESSION_ID", "TOKEN", "API_KEY"})

# Events that no template trigger sends: a function invokes another one directly.
DIRECT_INVOCATIONS = {"continue_turn.json": "MessageFunction"}

# Each function's reserved concurrency as intended; None: it shares the account's pool.
# MaxConcurrentRuns is the table's run slots, across every function (signoff.durable.slots):
# a reservation would throttle the requests that wait for a slot instead of deferring them.
RESERVED_CONCURRENCY: dict[str, Any] = {
    "MessageFunction": None,
    "ResolveFunction": None,
    "NotifierFunction": None,
    "SweeperFunction": None,
    "SweepWorkerFunction": None,
    "StreamFunction": None,
}

# The only actions allowed on Resource "*": X-Ray's, which take no resource ARN.
WILDCARD_ACTIONS = re.compile(r"^xray:")
# The only managed policies allowed (by name, in a function's Policies).
MANAGED_POLICIES = frozenset({"AWSXrayWriteOnlyAccess"})
# Lambda's default when neither the function nor Globals sets a Timeout.
LAMBDA_DEFAULT_TIMEOUT = 3


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


def _functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        logical_id: resource.get("Properties", {})
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def _events(function: dict[str, Any]) -> dict[str, dict[str, Any]]:
    events: dict[str, dict[str, Any]] = function.get("Events", {})
    return events


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _route_key(event: dict[str, Any]) -> str:
    props = event["Properties"]
    if "Path" not in props and "Method" not in props:
        return "$default"  # SAM's catch-all route: what no other route matches
    return f"{props['Method'].upper()} {props['Path']}"


def _matches(trigger: dict[str, Any], sample: Any) -> bool:
    """True when ``sample`` (an events/ file's content) is what ``trigger`` delivers."""
    kind = trigger["Type"]
    props = trigger.get("Properties", {})
    if not isinstance(sample, dict):
        return False
    if kind == "HttpApi":
        return sample.get("routeKey") == _route_key(trigger)
    if kind in {"Schedule", "ScheduleV2"} and "Input" in props:
        # A schedule with Input delivers exactly that JSON, no EventBridge envelope.
        return bool(sample == json.loads(props["Input"]))
    if kind in {"Schedule", "ScheduleV2"}:
        return sample.get("detail-type") == "Scheduled Event"
    if kind == "SQS":
        records = sample.get("Records") or [{}]
        return all(
            record.get("eventSource") == "aws:sqs"
            and _names_queue(str(record.get("eventSourceARN", "")), _queue_of(trigger))
            for record in records
        )
    raise AssertionError(f"test_template.py has no rule for {kind} events yet: add one")


def _queue_of(trigger: dict[str, Any]) -> str:
    """The logical id of the queue an SQS trigger reads (``!GetAtt <id>.Arn``)."""
    queue = trigger["Properties"]["Queue"]
    assert isinstance(queue, Tag) and queue.name == "GetAtt", queue
    return str(queue.value).removesuffix(".Arn")


def _names_queue(arn: str, queue: str) -> bool:
    """True when ``arn`` is the queue ``queue``'s: CloudFormation names it
    ``<stack>-<logical id>-<suffix>``, the local stack and events/ ``<stack>-<logical id>``."""
    return queue in arn.rsplit(":", 1)[-1].split("-")


def _owners(template: dict[str, Any], name: str, sample: Any) -> set[str]:
    """The functions one of whose triggers sends ``sample``, or that are invoked with it."""
    owners = {
        logical_id
        for logical_id, function in _functions(template).items()
        if any(_matches(event, sample) for event in _events(function).values())
    }
    if name in DIRECT_INVOCATIONS:
        owners.add(DIRECT_INVOCATIONS[name])
    return owners


# events/


def test_events_folder_has_files() -> None:
    assert EVENT_FILES, "events/ holds no sample event"


@pytest.mark.parametrize("path", EVENT_FILES, ids=lambda p: p.name)
def test_every_events_file_is_a_json_object(path: Path) -> None:
    assert isinstance(_load(path), dict), f"{path.name}: not a JSON object"


HTTP_FILES = [path for path in EVENT_FILES if "routeKey" in _load(path)]


@pytest.mark.parametrize("path", HTTP_FILES, ids=lambda p: p.name)
def test_http_events_are_payload_format_2(path: Path) -> None:
    # Given an events/ file for an HttpApi route
    sample = _load(path)
    # Then Powertools' own model of the v2 payload accepts it
    APIGatewayProxyEventV2Model.model_validate(sample)
    # And its parts agree with each other the way API Gateway fills them in
    context = sample["requestContext"]
    # $default takes any method and path; a route key names both.
    method, route = (
        (context["http"]["method"], sample["rawPath"])
        if sample["routeKey"] == "$default"
        else sample["routeKey"].split(" ", 1)
    )
    assert sample["version"] == "2.0"
    assert context["routeKey"] == sample["routeKey"]
    assert context["stage"] == "$default"
    assert context["http"]["method"] == method
    assert context["http"]["path"] == sample["rawPath"]
    assert context["http"]["sourceIp"]
    assert context["domainName"] == sample["headers"]["host"]
    assert all(name == name.lower() for name in sample["headers"]), "v2 headers are lowercase"
    parameters = sample.get("pathParameters", {})
    assert set(parameters) == set(re.findall(r"\{(\w+)\}", route))
    assert sample["rawPath"] == re.sub(r"\{(\w+)\}", lambda m: parameters[m[1]], route)
    assert sample["isBase64Encoded"] is False


@pytest.mark.parametrize("path", HTTP_FILES, ids=lambda p: p.name)
def test_http_event_bodies_match_their_content_type(path: Path) -> None:
    sample = _load(path)
    if "body" not in sample:
        method = sample["requestContext"]["http"]["method"]
        assert method == "GET", f"{path.name}: a POST without a body"
        return
    assert isinstance(sample["body"], str)
    content_type = sample["headers"]["content-type"]
    assert sample["headers"]["content-length"] == str(len(sample["body"].encode()))
    if content_type.split(";")[0] == "application/json":
        assert isinstance(json.loads(sample["body"]), dict)
    else:
        assert content_type == "application/x-www-form-urlencoded"
        assert parse_qs(sample["body"], strict_parsing=True)


@pytest.mark.parametrize("path", HTTP_FILES, ids=lambda p: p.name)
def test_http_event_path_parameters_are_agents_or_placeholders(path: Path) -> None:
    # {name} is a real sample agent; ids and tokens are the documented placeholders.
    for name, value in _load(path).get("pathParameters", {}).items():
        if name == "name":
            assert (ROOT / "agents" / value / "agent.yaml").is_file(), f"no agent {value}"
        else:
            assert value in PLACEHOLDERS, f"{path.name}: {name}={value} is no placeholder"


def test_every_http_route_has_an_events_file(template: dict[str, Any]) -> None:
    route_keys = {_load(path)["routeKey"] for path in HTTP_FILES}
    missing = [
        f"{logical_id} {_route_key(event)}"
        for logical_id, function in _functions(template).items()
        for event in _events(function).values()
        if event["Type"] == "HttpApi" and _route_key(event) not in route_keys
    ]
    assert not missing, f"no events/ file for: {missing}"


def test_every_trigger_has_an_events_file(template: dict[str, Any]) -> None:
    samples = [_load(path) for path in EVENT_FILES]
    missing = [
        f"{logical_id}.{name}"
        for logical_id, function in _functions(template).items()
        for name, event in _events(function).items()
        if not any(_matches(event, sample) for sample in samples)
    ]
    assert not missing, f"no events/ file for: {missing}"


def test_every_function_has_an_events_file(template: dict[str, Any]) -> None:
    covered = {owner for path in EVENT_FILES for owner in _owners(template, path.name, _load(path))}
    # The stream function gets HTTP requests from the Lambda Web Adapter, no events
    # (tests/packaging/test_built_stream_function.py sends it those).
    assert set(_functions(template)) - {"StreamFunction"} <= covered


@pytest.mark.parametrize("path", EVENT_FILES, ids=lambda p: p.name)
def test_every_events_file_belongs_to_a_function(template: dict[str, Any], path: Path) -> None:
    owners = _owners(template, path.name, _load(path))
    assert owners, f"{path.name} matches no trigger in template.yaml"
    assert owners <= set(_functions(template)), f"{path.name}: no function {owners}"


# Functions and their shared settings


def test_globals_run_python_3_13_on_x86_64_by_default_with_tracing_and_json_logs(
    template: dict[str, Any],
) -> None:
    settings = template["Globals"]["Function"]
    assert settings["Runtime"] == "python3.13"
    assert settings["Architectures"] == [Tag("Ref", "Architecture")]
    assert template["Parameters"]["Architecture"]["Default"] == "x86_64"
    assert settings["Tracing"] == "Active"
    assert settings["LoggingConfig"]["LogFormat"] == "JSON"
    for logical_id, function in _functions(template).items():
        assert "Runtime" not in function, f"{logical_id} overrides the Globals runtime"


def test_engine_layer_builds_for_python_3_13(template: dict[str, Any]) -> None:
    layer = template["Resources"]["EngineLayer"]
    assert layer["Properties"]["ContentUri"] == "layers/signoff/"
    assert layer["Metadata"]["BuildMethod"] == "python3.13"
    assert layer["Metadata"]["BuildArchitecture"] == Tag("Ref", "Architecture")
    assert "python3.13" in layer["Properties"]["CompatibleRuntimes"]


def test_functions_are_thin_handlers_on_the_engine_and_agents_layers(
    template: dict[str, Any],
) -> None:
    layers = template["Globals"]["Function"]["Layers"]
    assert Tag("Ref", "EngineLayer") in layers
    assert Tag("Ref", "AgentsLayer") in layers
    assert template["Resources"]["AgentsLayer"]["Properties"]["ContentUri"] == "agents/"
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["SIGNOFF_AGENTS_DIR"] == "/opt"
    for logical_id, function in _functions(template).items():
        assert re.fullmatch(r"functions/[a-z][a-z_]*/", function["CodeUri"]), logical_id
        if logical_id == "StreamFunction":
            # The Lambda Web Adapter runs run.sh, whose server imports the engine layer;
            # SAM appends a function's Layers to the Globals ones.
            assert function["Handler"] == "run.sh"
            assert len(function["Layers"]) == 1
            assert "LambdaAdapterLayer" in str(function["Layers"][0])
            continue
        assert function["Handler"] == "app.handler", logical_id
        assert "Layers" not in function, f"{logical_id} replaces the Globals layers"


def test_reserved_concurrency_is_as_intended(template: dict[str, Any]) -> None:
    functions = _functions(template)
    assert set(functions) == set(RESERVED_CONCURRENCY), "decide each function's concurrency"
    for logical_id, function in functions.items():
        reserved = function.get("ReservedConcurrentExecutions")
        assert reserved == RESERVED_CONCURRENCY[logical_id], logical_id


def test_the_run_cap_reaches_every_function_that_runs_turns(template: dict[str, Any]) -> None:
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["SIGNOFF_MAX_CONCURRENT_RUNS"] == Tag("Ref", "MaxConcurrentRuns")
    per_tenant = variables["SIGNOFF_MAX_CONCURRENT_RUNS_PER_TENANT"]
    assert per_tenant == Tag("Ref", "MaxConcurrentRunsPerTenant")
    assert variables["SIGNOFF_RUN_SLOT_WAIT"] == Tag("Ref", "RunSlotWaitSeconds")
    parameters = template["Parameters"]
    assert parameters["MaxConcurrentRuns"]["Default"] == 10
    assert parameters["MaxConcurrentRunsPerTenant"]["Default"] == 0
    for logical_id, function in _functions(template).items():
        own = function.get("Environment", {}).get("Variables", {})
        assert not {name for name in own if name.startswith("SIGNOFF_MAX_CONCURRENT")}, logical_id


def test_the_notifier_runs_at_most_notifier_max_concurrency_at_once(
    template: dict[str, Any],
) -> None:
    notifier = _functions(template)["NotifierFunction"]
    (sqs,) = [event for event in _events(notifier).values() if event["Type"] == "SQS"]
    scaling = sqs["Properties"]["ScalingConfig"]
    assert scaling == {"MaximumConcurrency": Tag("Ref", "NotifierMaxConcurrency")}
    # SQS event sources accept 2 to 1000
    parameter = template["Parameters"]["NotifierMaxConcurrency"]
    assert parameter["MinValue"] == 2 and parameter["MaxValue"] == 1000


def test_http_routes_use_the_declared_http_api(template: dict[str, Any]) -> None:
    assert template["Resources"]["HttpApi"]["Type"] == "AWS::Serverless::HttpApi"
    for logical_id, function in _functions(template).items():
        for name, event in _events(function).items():
            if event["Type"] == "HttpApi":
                assert event["Properties"]["ApiId"] == Tag("Ref", "HttpApi"), (logical_id, name)


def test_continuations_invoke_the_message_function_by_its_fixed_name(
    template: dict[str, Any],
) -> None:
    # The message function invokes itself, so its name is a fixed string, not a !Ref:
    # the variable, the invoke permission and the name itself must be that one string.
    # The variable names its alias (the published version, SnapStart's with
    # EnableSnapStart: tests/functional/template/test_snapstart_template.py).
    name = template["Resources"]["MessageFunction"]["Properties"]["FunctionName"]
    assert name == Tag("Sub", "${AWS::StackName}-message")
    alias = template["Resources"]["MessageFunction"]["Properties"]["AutoPublishAlias"]
    for logical_id, function in _functions(template).items():
        variables = function.get("Environment", {}).get("Variables", {})
        if "SIGNOFF_CONTINUE_FUNCTION" not in variables:
            continue
        assert variables["SIGNOFF_CONTINUE_FUNCTION"] == Tag("Sub", f"{name.value}:{alias}"), (
            logical_id
        )
        # The invoke grant names the same string: arn:…:function:${AWS::StackName}-message.
        invokes = [
            resource
            for policy in _policies(function)
            if isinstance(policy, dict)
            for statement in policy.get("Statement", [])
            if statement["Action"] == "lambda:InvokeFunction"
            for resource in _as_list(statement["Resource"])
        ]
        assert any(
            isinstance(r, Tag) and r.name == "Sub" and r.value.endswith(f"function:{name.value}")
            for r in invokes
        ), f"{logical_id} may not invoke {name}"


# The notify queue


def _queue_consumers(template: dict[str, Any], queue: str) -> dict[str, int]:
    """Each function with an SQS event on ``queue``, and its timeout in seconds."""
    default = template["Globals"]["Function"].get("Timeout", LAMBDA_DEFAULT_TIMEOUT)
    return {
        logical_id: function.get("Timeout", default)
        for logical_id, function in _functions(template).items()
        for event in _events(function).values()
        if event["Type"] == "SQS" and event["Properties"]["Queue"] == Tag("GetAtt", f"{queue}.Arn")
    }


def test_notify_queue_visibility_is_six_consumer_timeouts(template: dict[str, Any]) -> None:
    # Given the functions that consume the notify queue
    queue = template["Resources"]["NotifyQueue"]
    consumers = _queue_consumers(template, "NotifyQueue")
    # Then there is one, and a message is not visible again while it may still work on it
    assert list(consumers) == ["NotifierFunction"]
    assert queue["Properties"]["VisibilityTimeout"] >= 6 * max(consumers.values())


def test_the_sweep_queue_is_drained_by_the_sweep_workers_alone_ten_tasks_a_batch(
    template: dict[str, Any],
) -> None:
    # Given the functions that consume the sweep queue
    queue = template["Resources"]["SweepQueue"]["Properties"]
    consumers = _queue_consumers(template, "SweepQueue")
    # Then the sweep workers alone, ten tasks a batch, each failed one reported alone
    assert list(consumers) == ["SweepWorkerFunction"]
    [trigger] = _events(_functions(template)["SweepWorkerFunction"]).values()
    assert trigger["Properties"]["BatchSize"] == 10
    assert trigger["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # And a batch is not handed out again while a worker may still run it, at any
    # timeout SweeperTimeout allows
    assert consumers["SweepWorkerFunction"] == Tag("Ref", "SweeperTimeout")
    longest = template["Parameters"]["SweeperTimeout"]["MaxValue"]
    assert queue["VisibilityTimeout"] >= 6 * longest
    # And a task that keeps failing reaches the dead-letter queue before it expires
    redrive = queue["RedrivePolicy"]
    assert redrive["deadLetterTargetArn"] == Tag("GetAtt", "SweepDeadLetterQueue.Arn")
    receives = redrive["maxReceiveCount"]
    assert queue["MessageRetentionPeriod"] > receives * queue["VisibilityTimeout"]
    assert queue["SqsManagedSseEnabled"] is True


def test_the_sweeper_plans_onto_the_sweep_queue_and_may_do_nothing_else(
    template: dict[str, Any],
) -> None:
    sweeper = _functions(template)["SweeperFunction"]
    # the queue's URL reaches the planner alone; it may send there and nothing else
    assert sweeper["Environment"]["Variables"] == {
        "SIGNOFF_SWEEP_QUEUE_URL": Tag("Ref", "SweepQueue")
    }
    for logical_id, function in _functions(template).items():
        if logical_id != "SweeperFunction":
            variables = function.get("Environment", {}).get("Variables", {})
            assert "SIGNOFF_SWEEP_QUEUE_URL" not in variables, logical_id
    [policy] = _policies(sweeper)
    assert policy["Statement"] == [
        {
            "Effect": "Allow",
            "Action": "sqs:SendMessage",
            "Resource": Tag("GetAtt", "SweepQueue.Arn"),
        }
    ]
    [schedule] = _events(sweeper).values()
    assert schedule["Properties"]["Schedule"] == "rate(1 minute)"


def test_the_shard_counts_are_parameters_every_function_reads_which_only_go_up(
    template: dict[str, Any],
) -> None:
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    parameters = template["Parameters"]
    for parameter, variable, default in (
        ("SweepShards", "SIGNOFF_SWEEP_SHARDS", 12),
        ("ListingShards", "SIGNOFF_LISTING_SHARDS", 4),
    ):
        assert variables[variable] == Tag("Ref", parameter)
        spec = parameters[parameter]
        assert (spec["Type"], spec["Default"], spec["MinValue"]) == ("Number", default, 1)
        assert spec["MaxValue"] == MAX_SHARDS  # what the functions accept
        # raising one on a live table is safe, lowering one loses items
        assert "never lower it" in spec["Description"], parameter
        assert "docs/scale.md" in spec["Description"], parameter


def test_the_notifier_reports_partial_batch_failures(template: dict[str, Any]) -> None:
    events = _events(_functions(template)["NotifierFunction"])
    assert events["Notifications"]["Properties"]["FunctionResponseTypes"] == [
        "ReportBatchItemFailures"
    ]
    dlq = template["Resources"]["NotifyQueue"]["Properties"]["RedrivePolicy"]
    assert dlq["maxReceiveCount"] == 5


def test_queues_have_a_dead_letter_queue_and_consumers_report_failures(
    template: dict[str, Any],
) -> None:
    resources = template["Resources"]
    queues = {k for k, r in resources.items() if r["Type"] == "AWS::SQS::Queue"}
    targets = {
        resources[q]["Properties"]["RedrivePolicy"]["deadLetterTargetArn"].value.removesuffix(
            ".Arn"
        )
        for q in queues
        if "RedrivePolicy" in resources[q]["Properties"]
    }
    assert targets <= queues
    for logical_id in queues - targets:
        assert "RedrivePolicy" in resources[logical_id]["Properties"], f"{logical_id} has no DLQ"
    for logical_id, function in _functions(template).items():
        for event in _events(function).values():
            if event["Type"] == "SQS":
                types = event["Properties"].get("FunctionResponseTypes", [])
                assert "ReportBatchItemFailures" in types, logical_id


# IAM


def _policies(function: dict[str, Any]) -> list[Any]:
    """A function's Policies, with each ``!If``'s branches in place of the ``!If``."""
    found: list[Any] = []
    policies = function.get("Policies", [])
    for policy in policies if isinstance(policies, list) else [policies]:
        if isinstance(policy, Tag) and policy.name == "If":
            found.extend(p for p in policy.value[1:] if p != Tag("Ref", "AWS::NoValue"))
        else:
            found.append(policy)
    return found


def _statements(template: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every inline IAM statement: functions' Policies, IAM roles and policies."""
    found: list[tuple[str, dict[str, Any]]] = []
    for logical_id, function in _functions(template).items():
        for policy in _policies(function):
            if isinstance(policy, dict) and "Statement" in policy:
                found.extend((logical_id, s) for s in policy["Statement"])
    for logical_id, resource in template["Resources"].items():
        props = resource.get("Properties", {})
        if resource["Type"] == "AWS::IAM::Policy":
            found.extend((logical_id, s) for s in props["PolicyDocument"]["Statement"])
        if resource["Type"] == "AWS::IAM::Role":
            for policy in props.get("Policies", []):
                found.extend((logical_id, s) for s in policy["PolicyDocument"]["Statement"])
    return found


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_no_iam_statement_allows_every_resource_except_x_ray(template: dict[str, Any]) -> None:
    for logical_id, statement in _statements(template):
        # A Deny on * takes permissions away (the notifier's ENI actions outside a VPC).
        if statement.get("Effect") == "Allow" and "*" in _as_list(statement.get("Resource")):
            actions = _as_list(statement["Action"])
            assert all(WILDCARD_ACTIONS.match(a) for a in actions), (logical_id, statement)


def test_functions_use_scoped_policy_templates(template: dict[str, Any]) -> None:
    for logical_id, function in _functions(template).items():
        for policy in _policies(function):
            if isinstance(policy, str):
                assert policy in MANAGED_POLICIES, f"{logical_id}: managed policy {policy}"
            elif "Statement" not in policy:
                # A SAM policy template: each parameter names one resource, never "*".
                (parameters,) = policy.values()
                assert parameters, f"{logical_id}: {policy} is not scoped"
                assert "*" not in {str(v) for v in parameters.values()}, (logical_id, policy)


# Time: each function that runs turns says its timeout, and its lease follows it

TURN_FUNCTIONS = {
    "MessageFunction": "MessageTimeout",
    "ResolveFunction": "ResolveTimeout",
    "SweepWorkerFunction": "SweeperTimeout",
}


def test_functions_that_run_turns_take_their_timeout_from_a_parameter_and_tell_it(
    template: dict[str, Any],
) -> None:
    parameters = template["Parameters"]
    functions = _functions(template)
    for logical_id, parameter in TURN_FUNCTIONS.items():
        function = functions[logical_id]
        assert function["Timeout"] == Tag("Ref", parameter), logical_id
        # the session lease derives from it (signoff.settings.Deployment.lease_seconds)
        variables = function["Environment"]["Variables"]
        assert variables["SIGNOFF_FUNCTION_TIMEOUT"] == Tag("Ref", parameter), logical_id
        assert parameters[parameter]["MaxValue"] == 900, "Lambda's longest"
        # long enough for API Gateway's 30 s and the final checkpoint after it
        assert parameters[parameter]["MinValue"] >= 30, parameter
    # minutes, not 60 s, where turns run past a request: continuations and re-drives
    assert parameters["MessageTimeout"]["Default"] >= 300
    assert parameters["SweeperTimeout"]["Default"] >= 300
    for runs_none in ("NotifierFunction", "SweeperFunction"):
        variables = functions[runs_none].get("Environment", {}).get("Variables", {})
        assert "SIGNOFF_FUNCTION_TIMEOUT" not in variables, f"{runs_none} runs no turns"


def test_the_session_lease_is_derived_unless_set(template: dict[str, Any]) -> None:
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["SIGNOFF_CLAIM_TTL_MS"] == Tag("Ref", "SessionLeaseMs")
    parameter = template["Parameters"]["SessionLeaseMs"]
    # empty: each function's timeout plus a margin
    assert parameter["Default"] == ""
    assert re.fullmatch(parameter["AllowedPattern"], "")
    assert re.fullmatch(parameter["AllowedPattern"], "330000")
    assert not re.fullmatch(parameter["AllowedPattern"], "5m")
