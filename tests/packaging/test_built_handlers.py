"""What deploys is what was tested: the built functions, run on a stand-in of Lambda's runtime.

``sam build`` (``make template``) writes each function and the engine layer to
``.aws-sam/build``. For every function of ``template.yaml`` these tests start
``.venv-lambda``'s python3.13 — the runtime's boto3 and nothing else — with only
that function's built code and its layers on ``sys.path`` (``-s -B -P``, an
environment built from nothing, ``PYTHONPATH`` = the function's directory, then each
Python layer's ``python/``). The agents layer has no build step: ``SIGNOFF_AGENTS_DIR``
is the folder the built template's ``ContentUri`` names, which ``sam package`` zips.
``invoke_built.py`` imports the handler and invokes it with the files in ``events/``
against a moto server on loopback, so each process is one cold start.

A missing build or runtime stand-in skips these tests, except under ``CI``, where it
fails them: ``make test`` builds both first (its ``packaging`` prerequisite).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from tests.support.aws import TEMPLATE, free_port, load_template
from tests.support.aws import moto_server as moto_server
from tests.support.lambdas import load_event

if TYPE_CHECKING:
    from collections.abc import Iterable

ROOT = TEMPLATE.parent
BUILD = ROOT / ".aws-sam" / "build"
BUILT_TEMPLATE = BUILD / "template.yaml"
LAMBDA_VENV = ROOT / ".venv-lambda"
LAMBDA_PYTHON = LAMBDA_VENV / "bin" / "python"
DRIVER = Path(__file__).with_name("invoke_built.py")
EVENTS = ROOT / "events"

# Importable in the dev environment only: none of them may be found by a function.
# events/ files that stand for a refusal, and the status each must get.
REFUSED = {"unmatched_route": 405}
DEV_ONLY = ("pytest", "moto", "hypothesis", "mypy", "jsonschema")
# What each function imports from its layers.
FROM_LAYERS = ("signoff", "pydantic", "pydantic_core", "yaml", "httpx", "aws_lambda_powertools")
# The runtime provides these; a layer may pin its own pair.
SDK = ("boto3", "botocore")
# events/ placeholders that only a run can fill in (events/README.md); API_KEY is
# dropped by load_event, which makes the request anonymous.
RUN_TIME_PLACEHOLDERS = ("PENDING_ID", "SESSION_ID", "TOKEN")

pytestmark = pytest.mark.slow


def _functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        logical_id: resource.get("Properties", {})
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


# The functions Lambda's Python runtime invokes; the stream function's run.sh starts
# an HTTP server for the Lambda Web Adapter instead (test_built_stream_function.py).
WEB_ADAPTER_FUNCTIONS = ("StreamFunction",)
FUNCTIONS = sorted(set(_functions(load_template())) - set(WEB_ADAPTER_FUNCTIONS))


@dataclass(frozen=True)
class BuiltFunction:
    """One function as the built template deploys it, with its paths on this machine."""

    logical_id: str
    code: Path  # the function's own directory: /var/task in Lambda
    handler: str  # module.function
    python_layers: tuple[Path, ...]  # each Python layer's python/: /opt/python in Lambda
    agents: Path  # the agents layer: unpacked to /opt in Lambda
    timeout: int
    memory: int
    triggers: tuple[dict[str, Any], ...]
    variables: frozenset[str]  # the names Globals and the function itself set

    @property
    def python_path(self) -> tuple[Path, ...]:
        return (self.code, *self.python_layers)

    def answers(self, event: dict[str, Any]) -> bool:
        """True when one of this function's triggers delivers ``event``."""
        return any(_delivers(trigger, event) for trigger in self.triggers)


def _delivers(trigger: dict[str, Any], event: dict[str, Any]) -> bool:
    props = trigger.get("Properties", {})
    kind = trigger["Type"]
    if kind == "HttpApi":
        # No Method and Path: API Gateway's $default route, which takes what no route matches.
        route = f"{props['Method'].upper()} {props['Path']}" if "Path" in props else "$default"
        return bool(event.get("routeKey") == route)
    if kind in {"Schedule", "ScheduleV2"} and "Input" in props:
        # A schedule with Input delivers exactly that JSON, no EventBridge envelope.
        return bool(event == json.loads(props["Input"]))
    if kind in {"Schedule", "ScheduleV2"}:
        return event.get("detail-type") == "Scheduled Event"
    if kind == "SQS":
        # A batch comes from the queue its records name: CloudFormation names a queue
        # <stack>-<logical id>-<suffix>, events/ <stack>-<logical id>.
        queue = _queue_of(props["Queue"])
        records = event.get("Records") or [{}]
        return all(
            record.get("eventSource") == "aws:sqs"
            and queue in str(record.get("eventSourceARN", "")).rsplit(":", 1)[-1].split("-")
            for record in records
        )
    raise AssertionError(f"test_built_handlers.py has no rule for {kind} triggers yet: add one")


def _queue_of(arn: Any) -> str:
    """The logical id of the queue an SQS trigger reads: its ``Fn::GetAtt <id>.Arn``."""
    assert isinstance(arn, dict) and set(arn) == {"Fn::GetAtt"}, f"not a !GetAtt: {arn!r}"
    target = arn["Fn::GetAtt"]
    return str(target[0] if isinstance(target, list) else target.split(".", 1)[0])


def _ref(value: Any) -> str:
    assert isinstance(value, dict) and set(value) == {"Ref"}, f"not a !Ref: {value!r}"
    return str(value["Ref"])


def _number(template: dict[str, Any], value: Any) -> int:
    """A number the template gives, or a parameter's default (a deploy without overrides)."""
    if isinstance(value, dict):
        value = template["Parameters"][_ref(value)]["Default"]
    return int(value)


def built_function(logical_id: str) -> BuiltFunction:
    """``logical_id`` as ``.aws-sam/build/template.yaml`` describes it (long-form YAML)."""
    template = yaml.safe_load(BUILT_TEMPLATE.read_text())
    globals_ = template.get("Globals", {}).get("Function", {})
    functions = _functions(template)
    assert logical_id in functions, f"sam build did not build {logical_id}: run `make template`"
    props = {**globals_, **functions[logical_id]}
    python_layers: list[Path] = []
    data_layers: list[Path] = []
    for ref in [*globals_.get("Layers", []), *functions[logical_id].get("Layers", [])]:
        if isinstance(ref, dict) and "Fn::If" in ref:
            continue  # a layer AWS publishes (the Lambda Web Adapter), not built here
        layer = template["Resources"][_ref(ref)]
        content = (BUILD / layer["Properties"]["ContentUri"]).resolve()
        if str(layer.get("Metadata", {}).get("BuildMethod", "")).startswith("python"):
            # A Python layer's python/ lands in /opt/python, which Lambda puts on sys.path.
            python_layers.append(content / "python")
        else:
            data_layers.append(content)
    assert len(data_layers) == 1, f"{logical_id}: expected one agents layer, got {data_layers}"
    return BuiltFunction(
        logical_id=logical_id,
        code=(BUILD / props["CodeUri"]).resolve(),
        handler=props["Handler"],
        python_layers=tuple(python_layers),
        agents=data_layers[0],
        timeout=_number(template, props.get("Timeout", 3)),
        memory=int(props.get("MemorySize", 128)),
        triggers=tuple(props.get("Events", {}).values()),
        variables=frozenset(_variables(globals_) | _variables(functions[logical_id])),
    )


def _variables(properties: dict[str, Any]) -> set[str]:
    return set(properties.get("Environment", {}).get("Variables", {}))


def declared_variables() -> set[str]:
    """Every variable the built template sets on any function."""
    template = yaml.safe_load(BUILT_TEMPLATE.read_text())
    names = _variables(template.get("Globals", {}).get("Function", {}))
    for properties in _functions(template).values():
        names |= _variables(properties)
    return names


def built_functions() -> list[BuiltFunction]:
    return [built_function(logical_id) for logical_id in FUNCTIONS]


def owner(event: dict[str, Any]) -> BuiltFunction:
    """The one function whose trigger delivers ``event`` — where API Gateway would send it."""
    owners = [function for function in built_functions() if function.answers(event)]
    assert len(owners) == 1, f"{len(owners)} functions answer {event.get('routeKey', event)}"
    return owners[0]


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in {"", "0", "false", "no"}


@pytest.fixture(scope="module")
def built() -> None:
    """Skip (fail under CI) when ``make packaging`` has not run."""
    missing = [str(p.relative_to(ROOT)) for p in (BUILT_TEMPLATE, LAMBDA_PYTHON) if not p.exists()]
    if not missing:
        return
    message = f"{', '.join(missing)} missing: `make packaging` builds them (`make test` does)"
    if _in_ci():
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def lambda_env(built: None, moto_server: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """What every function's process gets: Lambda's variables, moto's, the template's."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "en_US.UTF-8",
        "TZ": ":UTC",
        # No ~/.aws of this machine: only the fake credentials below.
        "HOME": str(home),
        "AWS_CONFIG_FILE": str(home / "aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "aws-credentials"),
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_REGION": moto_server["AWS_DEFAULT_REGION"],
        # Tracing: Active. Subsegments go over UDP to a loopback port nobody reads.
        "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{free_port()}",
        "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
        **moto_server,
        "SIGNOFF_ALLOW_ANONYMOUS": "true",
    }


@dataclass(frozen=True)
class Run:
    """What one cold-started process of a function answered."""

    responses: list[Any]
    modules: dict[str, str | None]
    sys_path: list[str]
    base_prefix: str


def process_environment(function: BuiltFunction, env: dict[str, str]) -> dict[str, str]:
    """``env`` as ``function``'s process gets it: only the variables the template gives it.

    ``env`` holds every function's variables (the moto fixture resolves them all); the
    process keeps only those the template gives this function, as Lambda would.
    """
    others = declared_variables() - function.variables
    return {
        **{name: value for name, value in env.items() if name not in others},
        "PYTHONPATH": os.pathsep.join(str(path) for path in function.python_path),
        "SIGNOFF_AGENTS_DIR": str(function.agents),
        "LAMBDA_TASK_ROOT": str(function.code),
        "AWS_LAMBDA_FUNCTION_NAME": f"signoff-test-{function.logical_id}",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function.memory),
        "_HANDLER": function.handler,
    }


def run_built(
    function: BuiltFunction,
    env: dict[str, str],
    events: Iterable[dict[str, Any]],
    *,
    probes: Iterable[str] = (),
) -> Run:
    """Invoke ``function``'s built handler with ``events`` in one fresh process."""
    process_env = process_environment(function, env)
    command = [str(LAMBDA_PYTHON), "-s", "-B", "-P", str(DRIVER), function.handler]
    command += ["--timeout", str(function.timeout)]
    for name in probes:
        command += ["--probe", name]
    done = subprocess.run(
        command,
        input=json.dumps(list(events)),
        capture_output=True,
        text=True,
        env=process_env,
        cwd=function.code,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, (
        f"{function.logical_id} failed in the Lambda runtime's stand-in:\n{done.stderr[-6000:]}"
    )
    answer = json.loads(done.stdout)
    errors = [r for r in answer["responses"] if isinstance(r, dict) and "errorType" in r]
    assert not errors, f"{function.logical_id} raised:\n{''.join(errors[0]['stackTrace'])}"
    return Run(answer["responses"], answer["modules"], answer["sys_path"], answer["base_prefix"])


def body(response: dict[str, Any]) -> Any:
    return json.loads(response["body"])


def refund_results(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["statusText"]
        for e in events
        if e["type"] == "tool:result" and e["tool"] == "issue_refund"
    ]


def _placeholder_free_events(function: BuiltFunction) -> dict[str, dict[str, Any]]:
    """The events/ files this function answers that need no id from an earlier call."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(EVENTS.glob("*.json")):
        if any(placeholder in path.read_text() for placeholder in RUN_TIME_PLACEHOLDERS):
            continue
        event = load_event(path.stem)
        if function.answers(event):
            found[path.stem] = event
    return found


def _under(path: str, roots: Iterable[Path]) -> bool:
    return any(Path(path).resolve().is_relative_to(root.resolve()) for root in roots)


@pytest.mark.parametrize("logical_id", FUNCTIONS)
def test_each_function_runs_on_its_build_and_the_runtime_alone(
    logical_id: str, lambda_env: dict[str, str]
) -> None:
    # Given the function as built, and the events/ files it answers that need no run-time id
    # (none for a function whose every event names an item: then the import alone)
    function = built_function(logical_id)
    events = _placeholder_free_events(function)
    # When one fresh runtime process imports its handler and invokes it with each
    run = run_built(function, lambda_env, events.values(), probes=DEV_ONLY + FROM_LAYERS + SDK)
    # Then nothing of the dev environment could be imported
    for name in DEV_ONLY:
        assert run.modules[name] is None, f"{logical_id} could import {name}: {run.modules[name]}"
    # And the engine and its dependencies came from the built layers
    for name in FROM_LAYERS:
        origin = run.modules[name]
        assert origin is not None and _under(origin, function.python_layers), (name, origin)
    # And boto3 and botocore are one release: the runtime's pair, or both pinned in a layer
    # (a layer that brings only botocore runs it under the runtime's older boto3)
    sdk = {name: run.modules[name] for name in SDK}
    assert all(sdk.values()), sdk
    homes = {Path(str(origin)).parents[1] for origin in sdk.values()}
    assert len(homes) == 1, f"{logical_id} mixes boto3 and botocore from {sorted(map(str, homes))}"
    assert _under(str(homes.pop()), [LAMBDA_VENV, *function.python_layers])
    # And sys.path held the function, its layers, the interpreter's stdlib and the runtime's
    # site-packages, nothing else
    strays = [
        entry
        for entry in run.sys_path
        if not _under(entry, [*function.python_path, LAMBDA_VENV])
        and not (_under(entry, [Path(run.base_prefix)]) and "site-packages" not in entry)
    ]
    assert not strays, f"{logical_id} had more than its build on sys.path: {strays}"
    assert str(function.code) == run.sys_path[0]
    # And every event was answered as it should be: without an error, but for the one
    # sent to API Gateway's $default route, a known path with a wrong method (405)
    for (name, _), response in zip(events.items(), run.responses, strict=True):
        status = response.get("statusCode", 200)
        if name in REFUSED:
            assert status == REFUSED[name], f"{logical_id} answered {name} with {response}"
            assert response["headers"]["Allow"] == "POST", response
        else:
            assert 200 <= status < 300, f"{logical_id} answered {name} with {status}: {response}"


def test_a_refund_pauses_then_its_approval_finishes_the_turn(lambda_env: dict[str, str]) -> None:
    # Given a refund request, sent where API Gateway would send it
    request = load_event("message_post")
    (paused_response,) = run_built(owner(request), lambda_env, [request]).responses
    # Then the turn pauses for an approval of issue_refund
    assert paused_response["statusCode"] == 202, paused_response
    paused = body(paused_response)
    assert paused["pending"] is True and paused["type"] == "approval"
    assert paused["tool"] == "issue_refund"
    # When the approval of that pending id reaches its function, in a fresh process
    approve = load_event("approval_approve", PENDING_ID=paused["id"])
    (done_response,) = run_built(owner(approve), lambda_env, [approve]).responses
    # Then the turn ran to its end with the refund approved
    assert done_response["statusCode"] == 200, done_response
    done = body(done_response)
    assert done["sessionId"] == paused["sessionId"]
    assert refund_results(done["events"]) == ["Approved."]


def test_the_read_routes_and_the_schedule_answer_from_the_build(
    lambda_env: dict[str, str],
) -> None:
    # Given the agents list, the OpenAPI document and the daily-digest schedule's input
    names = ("agents_list", "openapi_get", "schedule_daily_digest")
    events = {name: load_event(name) for name in names}
    by_function: dict[str, list[str]] = {}
    for name, event in events.items():
        by_function.setdefault(owner(event).logical_id, []).append(name)
    # When each function gets its events in one fresh process
    responses: dict[str, Any] = {}
    for logical_id, owned in by_function.items():
        run = run_built(built_function(logical_id), lambda_env, [events[n] for n in owned])
        responses.update(zip(owned, run.responses, strict=True))
    # Then both sample agents are listed, from the agents layer's folder
    assert responses["agents_list"]["statusCode"] == 200
    agents = [agent["name"] for agent in body(responses["agents_list"])]
    assert agents == ["customer-service", "daily-digest"]
    # And the built code serves the OpenAPI document checked in with the source
    assert responses["openapi_get"]["statusCode"] == 200
    served = body(responses["openapi_get"])
    assert "/agents/{name}/messages" in served["paths"]
    assert served == json.loads((ROOT / "openapi.json").read_text())
    # And the scheduled run finished (it has no caller: the outcome is the session's)
    assert responses["schedule_daily_digest"]["status"] == "finished"
    assert responses["schedule_daily_digest"]["sessionId"]


def _requirements_closure(site: Path, root: str) -> set[str]:
    """``root`` and every distribution it requires, transitively, by normalised name."""
    metadata = {
        _normalise(dist.metadata["Name"]): dist
        for dist in importlib.metadata.distributions(path=[str(site)])
    }
    closure: set[str] = set()
    todo = [_normalise(root)]
    while todo:
        name = todo.pop()
        if name in closure or name not in metadata:
            continue
        closure.add(name)
        for requirement in metadata[name].requires or []:
            if "extra ==" not in requirement:
                todo.append(_normalise(re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0]))
    return closure


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_stand_in_is_python_3_13_with_boto3_only(built: None) -> None:
    # Given the runtime's stand-in that make builds from requirements-lambda-runtime.txt
    site = LAMBDA_VENV / "lib" / "python3.13" / "site-packages"
    version = subprocess.run(
        [str(LAMBDA_PYTHON), "-s", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        check=True,
    ).stdout.strip()
    # Then it is Lambda's Python, with the pinned boto3 and what boto3 needs, nothing else
    assert version == "3.13"
    installed = {
        _normalise(dist.metadata["Name"]): dist.version
        for dist in importlib.metadata.distributions(path=[str(site)])
    }
    pinned = (ROOT / "requirements-lambda-runtime.txt").read_text()
    assert f"boto3=={installed.get('boto3')}" in pinned.splitlines(), installed
    assert set(installed) == _requirements_closure(site, "boto3"), installed


@pytest.mark.parametrize("logical_id", FUNCTIONS)
def test_the_build_ships_bytecode_that_the_runtime_imports(built: None, logical_id: str) -> None:
    # Given a function as `make template` / `make build` leaves it
    function = built_function(logical_id)
    roots = function.python_path
    sources = [path for root in roots for path in root.rglob("*.py")]
    # Then every module has a python3.13 .pyc that is never checked against its source
    # (the zip's timestamps do not matter): flags 0b01, hash-based, unchecked
    missing, checked = [], []
    for source in sources:
        cached = source.parent / "__pycache__" / f"{source.stem}.cpython-313.pyc"
        if not cached.is_file():
            missing.append(source)
        elif int.from_bytes(cached.read_bytes()[4:8], "little") != 0b01:
            checked.append(cached)
    assert sources and not missing and not checked, (missing[:5], checked[:5])
    # And the runtime's python loads the handler's code from it: compiling is refused
    module = function.handler.rpartition(".")[0]
    loaded = subprocess.run(
        [
            str(LAMBDA_PYTHON),
            "-s",
            "-B",
            "-P",
            "-c",
            "import importlib.util\n"
            f"spec = importlib.util.find_spec({module!r})\n"
            "def refuse(*_, **__): raise SystemExit('compiled from source')\n"
            "spec.loader.source_to_code = refuse\n"
            "print(spec.cached, spec.loader.get_code(spec.name) is not None)",
        ],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(map(str, roots))},
        cwd=function.code,
        check=True,
    ).stdout.split()
    assert loaded == [str(function.code / "__pycache__" / f"{module}.cpython-313.pyc"), "True"]
