"""A cold start's imports and first invocation: each built handler against a reference.

Workload: for each function of the built template (``.aws-sam/build``, from
``make template``), a fresh ``.venv-lambda/bin/python -s -B -P`` process — Lambda's
python3.13 with the runtime's boto3 and nothing else — with ``PYTHONPATH`` = the
function's build directory and its Python layers' ``python/`` times ``import app``
then the handler's first invocation with the function's ``events/`` file
(``time.perf_counter`` inside the child). Another fresh process of the same kind,
with the same layers, times a *minimal reference handler* (``bench/reference/``)
with exactly the stack signoff's functions must use and nothing of signoff:
Powertools Logger, Tracer (botocore + httpx), Metrics and a lazily created boto3
DynamoDB client, plus, for an HTTP function, ``APIGatewayHttpResolver(
enable_validation=True)`` with one pydantic-validated route, for an SQS function
``BatchProcessor`` (a scheduled one gets the shared stack alone). Both run ``--runs``
times, interleaved; the figure is median(app import) / median(reference import),
target <= 1.10 for message and resolve, <= 1.25 for the notifier and the sweeper. The
first invocation is printed beside it: a cold start pays both, so an import moved into
the first call shows there.
So is the number of ``signoff`` modules the handler's import loads, from one more fresh
process after the timed ones (what ``tests/packaging/import_paths/`` lists by name).

The children get the functions' environment as Lambda would: the template's
variables naming the resources of a moto server this benchmark starts on loopback
(the first invocations read and write there), fake credentials. One extra run per
function, with ``AWS_ENDPOINT_URL`` on a closed loopback port, records every socket
the import opens and fails the benchmark if there is one. ``-B`` because Lambda's
``/opt`` and ``/var/task`` are read-only: a cold start can read ``.pyc`` files, never
write them. ``make template`` (and ``make build``, what to deploy) compiles them into
the build, and the references are compiled the same way, so by default both read
bytecode. ``--no-bytecode`` times the build as plain ``sam build`` ships it, every
cold start compiling the layer's and the function's modules: a copy of the build
without its ``__pycache__`` folders (the runtime's boto3 keeps its bytecode, as on
Lambda). Both modes print the absolute times beside the ratio.

    python bench/cold_start.py [--runs 15] [--no-bytecode] [--importtime 12] [--baseline BUILD]
                               [--only message,resolve,notifier,sweeper,sweepworker]

``--importtime N`` adds, per function, where ``-X importtime`` finds the time the
handler's import spends beyond its reference's: the N third-party modules our code
imports that cost most (with what they import in turn), and the N modules of our own
with the most module-level work — what would have to load lazily to bring the
figure down.

``--baseline BUILD`` times each function of another build (an earlier commit's
``.aws-sam/build``) in the same interleaved runs and prints its figures below this
build's: a change's effect measured at one load, which two separate runs cannot give.

``--snapstart`` adds, in the same interleaved runs, the function's cold start as an
environment restored from a SnapStart snapshot has it: after the import, the
runtime's before-snapshot hooks (``signoff.aws.snapstart.prime``, timed apart: it
runs once per published version, not per cold start) and after-restore hooks, then
the first invocation.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.built_functions import REGION, STACK, Function, built_functions
from bench.importtime import offenders, print_offenders

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = ROOT / "bench" / "reference"
# The reference module of each kind of function (by its template trigger).
REFERENCE = {"http": "http_app", "sqs": "sqs_app", "schedule": "schedule_app"}
# Issue 27's bars for the import ratio, by function.
TARGETS = {"message": 1.10, "resolve": 1.10, "notifier": 1.25, "sweeper": 1.25}
# The events/ file each function's first invocation gets; the reference of its kind
# gets the one of the same trigger. Placeholders get ids nobody stored (a 404, a
# record for no item): the first call still runs the route, the store and the client.
FIRST_EVENT = {
    "message": "message_post",
    "resolve": "session_status",
    "notifier": "notifier_sqs_batch",
    "sweeper": "sweeper_schedule",
    "sweepworker": "sweep_worker_sqs_batch",
}
REFERENCE_EVENT = {
    "http": "message_post",
    "sqs": "notifier_sqs_batch",
    "schedule": "sweeper_schedule",
}
# Port 9 (discard) on loopback: nothing listens, so a connection is refused at once.
CLOSED_ENDPOINT = "http://127.0.0.1:9"
# Top-level packages that are ours, besides each function's handler module.
FIRST_PARTY = frozenset({"signoff"})

# Run inside the child: the handler's import, then its first invocation with the event
# in BENCH_EVENT (read before the clock starts), both times printed as the last line.
TIMED = """\
import json, os, sys, time
event = json.loads(open(os.environ["BENCH_EVENT"]).read())
class Context:
    function_name = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
    memory_limit_in_mb = int(os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"])
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:" + function_name
    aws_request_id = "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
    function_version = "$LATEST"
    deadline = time.monotonic() + 60
    def get_remaining_time_in_millis(self):
        return int((self.deadline - time.monotonic()) * 1000)
os.environ["_X_AMZN_TRACE_ID"] = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"
started = time.perf_counter()
import {module} as handler_module
imported = time.perf_counter()
figures = [imported - started]
primed = 0.0
if os.environ.get("BENCH_SNAPSTART"):  # the hooks SnapStart runs (signoff's stand-in)
    from signoff.aws import snapshot_restore
    snapshot_restore.run_before_snapshot()
    primed = time.perf_counter() - imported
    snapshot_restore.run_after_restore()
    imported = time.perf_counter()
answer = handler_module.handler(event, Context())
invoked = time.perf_counter()
status = answer.get("statusCode", 200) if isinstance(answer, dict) else 200
figures += [invoked - imported, status, primed]
sys.stdout.write("\\n" + json.dumps(figures) + "\\n")
"""
# Run inside the child: the handler's import, then the signoff modules it loaded (the
# lists tests/packaging/import_paths/ keeps), counted as the last line.
MODULES = """\
import json, sys
import {module}
print(json.dumps(sum(m == "signoff" or m.startswith("signoff.") for m in sys.modules)))
"""
# Run inside the child: the statement under an audit hook that records sockets.
AUDITED = """\
import json, sys
opened = []
def audit(event, args):
    if event in ("socket.connect", "socket.getaddrinfo", "socket.sendto", "socket.sendmsg"):
        opened.append([event, repr(args)[:200]])
sys.addaudithook(audit)
{statement}
print(json.dumps(opened))
"""


def environment(
    function: Function,
    home: Path,
    aws: dict[str, str] | None = None,
    python_path: tuple[Path, ...] | None = None,
) -> dict[str, str]:
    """What Lambda gives the function's process.

    Without ``aws`` nothing could reach AWS (the template's names, a closed endpoint);
    ``aws`` is the moto server's endpoint and the names of the resources made there.
    ``python_path`` replaces the function's (a reference on the function's layers).
    """
    python_path = python_path or function.python_path
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "en_US.UTF-8",
        "TZ": ":UTC",
        "HOME": str(home),
        "AWS_CONFIG_FILE": str(home / "aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "aws-credentials"),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ENDPOINT_URL": CLOSED_ENDPOINT,
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
        "AWS_LAMBDA_FUNCTION_NAME": f"{STACK}-{function.name}",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function.memory),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:9",
        "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
        "LAMBDA_TASK_ROOT": str(python_path[0]),
        "_HANDLER": f"{function.module}.handler",
        **function.variables,
        **(aws or {}),
        "SIGNOFF_AGENTS_DIR": str(function.agents),
        "PYTHONPATH": os.pathsep.join(str(path) for path in python_path),
    }


def child(
    python: Path, env: dict[str, str], code: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    """One fresh process of the runtime's stand-in; fails the benchmark if it fails."""
    done = subprocess.run(
        [str(python), "-s", "-B", "-P", *flags, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=env["LAMBDA_TASK_ROOT"],
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the child process failed:\n{code}\n{done.stderr[-4000:]}")
    return done


@dataclass(frozen=True)
class Cold:
    """One cold start: the handler module's import and its first invocation (seconds)."""

    imported: float
    invoked: float
    status: int
    primed: float = 0.0  # under --snapstart: the before-snapshot hooks' time


def cold_start(
    python: Path, env: dict[str, str], module: str, event: Path, *, snapstart: bool = False
) -> Cold:
    extra = {"BENCH_SNAPSTART": "1"} if snapstart else {}
    done = child(python, {**env, **extra, "BENCH_EVENT": str(event)}, TIMED.format(module=module))
    imported, invoked, status, primed = json.loads(done.stdout.strip().splitlines()[-1])
    if status >= 500:
        raise SystemExit(f"{module} answered its first invocation with {status}:\n{done.stdout}")
    return Cold(imported, invoked, status, primed)


def sockets_opened(python: Path, env: dict[str, str], statement: str) -> list[list[str]]:
    done = child(python, env, AUDITED.format(statement=statement))
    opened: list[list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return opened


def signoff_modules(python: Path, env: dict[str, str], module: str) -> int:
    """How many ``signoff`` modules one more fresh process loads importing ``module``."""
    done = child(python, env, MODULES.format(module=module))
    count: int = json.loads(done.stdout.strip().splitlines()[-1])
    return count


@dataclass(frozen=True)
class Moto:
    """A moto server on loopback holding the built template's resources."""

    endpoint: str
    variables: dict[str, dict[str, str]]  # function logical id -> its resolved variables

    def empty_queues(self) -> None:
        """Every queue emptied: what a first invocation sent must not slow the next one
        (moto's SendMessageBatch slows as a queue fills; SQS's does not)."""
        import boto3

        sqs = boto3.client("sqs", endpoint_url=self.endpoint, region_name=REGION)
        for url in sqs.list_queues().get("QueueUrls", []):
            # received and deleted, ten at a time: moto allows one PurgeQueue a minute
            while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get(
                "Messages", []
            ):
                sqs.delete_message_batch(
                    QueueUrl=url,
                    Entries=[
                        {"Id": str(n), "ReceiptHandle": message["ReceiptHandle"]}
                        for n, message in enumerate(batch)
                    ],
                )


def start_moto() -> Moto:
    """moto's server in this process, with the template's tables, queues, bucket, secrets."""
    import socket

    from moto.server import ThreadedMotoServer

    from signoff_dev.local.template import create_resources, load_template

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs each request
    ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False).start()
    endpoint = f"http://127.0.0.1:{port}"
    for name, value in {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        os.environ[name] = value
    # The source template: the resolver reads its short-form tags (the built one is long-form).
    template = load_template(ROOT / "template.yaml")
    for resource in template["Resources"].values():
        props = resource.get("Properties", {})
        if resource["Type"] == "AWS::Serverless::Function" and "Timeout" in props:
            props["Timeout"] = 60  # a parameter's !Ref; the benchmark never reads it
    resources = create_resources(template, stack_name=STACK)
    return Moto(
        endpoint,
        {logical_id: spec.environment for logical_id, spec in resources.functions.items()},
    )


def first_event(name: str, scratch: Path) -> Path:
    """``events/<name>.json`` with ids nobody stored, written where the child reads it."""
    text = (ROOT / "events" / f"{name}.json").read_text()
    for placeholder in ("PENDING_ID", "SESSION_ID", "TOKEN"):
        text = text.replace(placeholder, f"bench{placeholder.lower().replace('_', '')}")
    event = json.loads(text)
    event.get("headers", {}).pop("x-api-key", None)  # anonymous: the default tenant
    path = scratch / f"{name}.json"
    path.write_text(json.dumps(event))
    return path


def references(scratch: Path, bytecode: bool) -> Path:
    """``bench/reference`` copied, compiled as ``make template`` compiles the build."""
    target = scratch / "reference"
    shutil.copytree(REFERENCES, target, ignore=shutil.ignore_patterns("__pycache__"))
    if bytecode:
        subprocess.run(
            [
                str(ROOT / ".venv-lambda" / "bin" / "python"),
                "-m",
                "compileall",
                "-q",
                "--invalidation-mode",
                "unchecked-hash",
                str(target),
            ],
            check=True,
        )
    return target


def without_bytecode(build: Path, target: Path) -> Path:
    """A copy of ``build`` without its ``__pycache__`` folders, as plain sam build ships."""
    shutil.copytree(build, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def baseline_needs(build: Path | None) -> tuple[Path, ...]:
    return () if build is None else (build / "template.yaml",)


def print_baseline(
    python: Path, function: Function, env: dict[str, str], runs: list[Cold], reference: float
) -> None:
    """The same function of ``--baseline``'s build, timed in the same interleaved runs."""
    imported = statistics.median(cold.imported for cold in runs)
    first = statistics.median(cold.invoked for cold in runs)
    print(
        f"  baseline: {imported / reference:.2f}x the reference,"
        f" {signoff_modules(python, env, function.module)} signoff modules"
        f"  (import {imported * 1e3:.0f} ms; first invocation {first * 1e3:.0f} ms;"
        f" cold start {(imported + first) * 1e3:.0f} ms; answered {runs[0].status})",
        flush=True,
    )


def print_restored(runs: list[Cold]) -> None:
    """The function's first invocation in an environment restored from a SnapStart snapshot."""
    first = statistics.median(cold.invoked for cold in runs)
    primed = statistics.median(cold.primed for cold in runs)
    print(
        f"  restored by SnapStart: first invocation {first * 1e3:.0f} ms"
        f" (primed before the snapshot in {primed * 1e3:.0f} ms; answered {runs[0].status})",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--build", type=Path, default=ROOT / ".aws-sam" / "build")
    parser.add_argument("--python", type=Path, default=ROOT / ".venv-lambda" / "bin" / "python")
    parser.add_argument("--no-bytecode", action="store_true")
    parser.add_argument("--importtime", type=int, default=0, metavar="N")
    parser.add_argument("--baseline", type=Path, metavar="BUILD")
    parser.add_argument("--only", metavar="NAMES", help="these functions (message,notifier,…)")
    parser.add_argument("--snapstart", action="store_true", help="also as restored by SnapStart")
    args = parser.parse_args()
    for needed in (args.build / "template.yaml", args.python, *baseline_needs(args.baseline)):
        if not needed.exists():
            raise SystemExit(f"{needed} missing: `make packaging` builds it")
    ratios = {}
    bytecode = "no .pyc, as plain sam build ships" if args.no_bytecode else "with the built .pyc"
    print(f"cold starts, {bytecode}; median of {args.runs}, app and reference interleaved")
    with tempfile.TemporaryDirectory(prefix="cold-start-") as scratch:
        home = Path(scratch)
        build = args.build
        if args.no_bytecode:  # the build without its .pyc; the runtime's boto3 keeps its own
            build = without_bytecode(args.build, home / "build")
        reference_code = references(home, not args.no_bytecode)
        baselines = {}
        if args.baseline:
            old_build = args.baseline
            if args.no_bytecode:
                old_build = without_bytecode(args.baseline, home / "baseline")
            baselines = {f.name: f for f in built_functions(old_build, args.baseline)}
        moto = start_moto()
        for function in built_functions(build, args.build):
            if args.only and function.name not in args.only.split(","):
                continue
            if not (function.agents / "channels.yaml").is_file():
                raise SystemExit(f"{function.name}: no agents folder at {function.agents}")
            audit_env = environment(function, home)
            opened = sockets_opened(args.python, audit_env, f"import {function.module}")
            if opened:
                raise SystemExit(f"{function.name}: importing the handler opened sockets: {opened}")
            aws = {
                "AWS_ENDPOINT_URL": moto.endpoint,
                **moto.variables[function.logical_id],
                # The events carry no key: the default tenant's, as the packaging tests send.
                "SIGNOFF_ALLOW_ANONYMOUS": "true",
            }
            env = environment(function, home, aws)
            reference_env = environment(function, home, aws, (reference_code, *function.layers))
            event = first_event(
                FIRST_EVENT.get(function.name, REFERENCE_EVENT[function.kind]), home
            )
            reference_event = first_event(REFERENCE_EVENT[function.kind], home)
            reference_module = REFERENCE[function.kind]
            baseline = baselines.get(function.name)
            baseline_env = environment(baseline, home, aws) if baseline else {}
            apps: list[Cold] = []
            refs: list[Cold] = []
            olds: list[Cold] = []
            restored: list[Cold] = []
            for _ in range(args.runs):
                refs.append(
                    cold_start(args.python, reference_env, reference_module, reference_event)
                )
                apps.append(cold_start(args.python, env, function.module, event))
                moto.empty_queues()
                if baseline:
                    olds.append(cold_start(args.python, baseline_env, baseline.module, event))
                    moto.empty_queues()
                if args.snapstart:
                    restored.append(
                        cold_start(args.python, env, function.module, event, snapstart=True)
                    )
                    moto.empty_queues()
            app = statistics.median(cold.imported for cold in apps)
            ref = statistics.median(cold.imported for cold in refs)
            first = statistics.median(cold.invoked for cold in apps)
            ref_first = statistics.median(cold.invoked for cold in refs)
            ratios[function.name] = app / ref
            modules = signoff_modules(args.python, env, function.module)
            print(
                f"{function.name}: {app / ref:.2f}x the {function.kind} reference,"
                f" {modules} signoff modules"
                f"  (import {app * 1e3:.0f} ms / {ref * 1e3:.0f} ms;"
                f" first invocation {first * 1e3:.0f} ms, the reference's {ref_first * 1e3:.0f} ms;"
                f" cold start {(app + first) * 1e3:.0f} ms / {(ref + ref_first) * 1e3:.0f} ms;"
                f" answered {apps[0].status} / {refs[0].status})",
                flush=True,
            )
            if baseline:
                print_baseline(args.python, baseline, baseline_env, olds, ref)
            if restored:
                print_restored(restored)
            if args.importtime:
                app_report = child(
                    args.python, env, f"import {function.module}", "-X", "importtime"
                )
                reference_report = child(
                    args.python, reference_env, f"import {reference_module}", "-X", "importtime"
                )
                ours = set(FIRST_PARTY | {function.module})
                found = offenders(app_report.stderr, reference_report.stderr, ours, args.importtime)
                print_offenders(found)
    over = {name: ratios[name] for name, bar in TARGETS.items() if ratios.get(name, 0) > bar}
    verdict = (
        "ok"
        if not over
        else "over target: " + ", ".join(f"{name} {ratio:.2f}x" for name, ratio in over.items())
    )
    bars = ", ".join(f"{name} <= {bar:.2f}x" for name, bar in TARGETS.items())
    print(f"targets {bars} ({bytecode}): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
