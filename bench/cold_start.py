"""A cold start's imports: each built handler module against its bare dependencies.

Workload: for each function of the built template (``.aws-sam/build``, from
``make template``), a fresh ``.venv-lambda/bin/python -s -B -P`` process — Lambda's
python3.13 with the runtime's boto3 and nothing else — with ``PYTHONPATH`` = the
function's build directory and its Python layers' ``python/`` times ``import app``
(``time.perf_counter`` around the import, inside the child). Another fresh process of
the same kind times ``import boto3, pydantic, httpx, yaml, aws_lambda_powertools``.
Both run 15 times, interleaved; the figure is median(app) / median(bare), target
<= 1.1.

The children get the functions' environment as Lambda would: the template's
variables with well-formed names of resources that do not exist, fake credentials,
and ``AWS_ENDPOINT_URL`` on a closed loopback port, so a network call made during
an import fails loudly; one extra run per function also records every socket an
import opens and fails the benchmark if there is one. ``-B`` because Lambda's ``/opt``
and ``/var/task`` are read-only: a cold start can read ``.pyc`` files, never write them.
``make template`` (and ``make build``, what to deploy) compiles them into the build,
so by default both imports read the shipped bytecode. ``--no-bytecode`` times the
build as plain ``sam build`` ships it, every cold start compiling the layer's and the
function's modules: a copy of the build without its ``__pycache__`` folders (the
runtime's boto3 keeps its bytecode, as on Lambda). Both modes print the absolute times
beside the ratio.

    python bench/cold_start.py [--runs 15] [--no-bytecode] [--importtime 12]

``--importtime N`` adds, per function, where ``-X importtime`` finds the time the
handler's import spends beyond the bare dependencies: the N third-party modules our
code imports that cost most (with what they import in turn), and the N modules of our
own with the most module-level work — what would have to load lazily to bring the
figure down.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
BARE = "import boto3, pydantic, httpx, yaml, aws_lambda_powertools"
TARGET = 1.1
STACK = "signoff-bench"
ACCOUNT = "123456789012"
REGION = "us-east-1"
# Port 9 (discard) on loopback: nothing listens, so a connection is refused at once.
CLOSED_ENDPOINT = "http://127.0.0.1:9"
# Top-level packages that are ours, besides each function's handler module.
FIRST_PARTY = frozenset({"signoff"})

# Run inside the child: one timed statement, its seconds printed as the last line.
TIMED = """\
import time
started = time.perf_counter()
{statement}
print(repr(time.perf_counter() - started))
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


@dataclass(frozen=True)
class Function:
    """One built function: the statement that imports its handler, and its sys.path."""

    name: str  # MessageFunction -> message
    logical_id: str
    module: str
    python_path: tuple[Path, ...]
    agents: Path
    memory: int
    variables: dict[str, str]


# What ${AWS::…} pseudo parameters resolve to in the stand-in stack.
PSEUDO = {
    "AWS::StackName": STACK,
    "AWS::Region": REGION,
    "AWS::AccountId": ACCOUNT,
    "AWS::Partition": "aws",
    "AWS::URLSuffix": "amazonaws.com",
}


def _fake(value: Any, template: dict[str, Any]) -> str:
    """A well-formed stand-in for what a template value resolves to in a deployed stack."""
    if not isinstance(value, dict):
        return str(value)
    if isinstance(value.get("Fn::Sub"), str):
        return re.sub(
            r"\$\{([^}!.]+)\}",
            lambda name: PSEUDO.get(name[1]) or _fake({"Ref": name[1]}, template),
            value["Fn::Sub"],
        )
    logical_id = str(value.get("Ref"))
    if logical_id in PSEUDO:
        return PSEUDO[logical_id]
    if logical_id in template.get("Parameters", {}):
        return str(template["Parameters"][logical_id].get("Default", ""))
    kind = template["Resources"].get(logical_id, {}).get("Type")
    if kind == "AWS::DynamoDB::Table":
        return f"{STACK}-{logical_id}-0A1B2C3D4E5F"
    if kind == "AWS::S3::Bucket":
        return f"{STACK}-{logical_id.lower()}-0a1b2c3d4e5f"
    if kind == "AWS::SQS::Queue":
        return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{STACK}-{logical_id}-0A1B2C3D4E5F"
    if kind == "AWS::SecretsManager::Secret":
        return f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{logical_id}-0A1B2C3D-AbCdEf"
    if kind in {"AWS::Serverless::HttpApi", "AWS::ApiGatewayV2::Api"}:
        return "a1b2c3d4e5"
    raise SystemExit(f"cold_start.py cannot stand in for {value} ({kind}): add a rule")


def built_functions(build: Path) -> list[Function]:
    """The built template's functions, their layers and environment (long-form YAML)."""
    template = yaml.safe_load((build / "template.yaml").read_text())
    globals_ = template.get("Globals", {}).get("Function", {})
    functions = []
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        props = {**globals_, **resource["Properties"]}
        python_layers, data_layers = [], []
        for ref in [*globals_.get("Layers", []), *resource["Properties"].get("Layers", [])]:
            layer = template["Resources"][ref["Ref"]]
            content = (build / layer["Properties"]["ContentUri"]).resolve()
            if str(layer.get("Metadata", {}).get("BuildMethod", "")).startswith("python"):
                python_layers.append(content / "python")
            else:
                data_layers.append(content)
        variables = {
            **globals_.get("Environment", {}).get("Variables", {}),
            **resource["Properties"].get("Environment", {}).get("Variables", {}),
        }
        functions.append(
            Function(
                name=logical_id.removesuffix("Function").lower(),
                logical_id=logical_id,
                module=props["Handler"].rpartition(".")[0],
                python_path=((build / props["CodeUri"]).resolve(), *python_layers),
                agents=data_layers[0] if data_layers else Path("/opt"),
                memory=int(props.get("MemorySize", 128)),
                variables={name: _fake(value, template) for name, value in variables.items()},
            )
        )
    return functions


def environment(function: Function, home: Path) -> dict[str, str]:
    """What Lambda gives the function's process, with nothing that could reach AWS."""
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
        "LAMBDA_TASK_ROOT": str(function.python_path[0]),
        "_HANDLER": f"{function.module}.handler",
        **function.variables,
        "SIGNOFF_AGENTS_DIR": str(function.agents),
        "PYTHONPATH": os.pathsep.join(str(path) for path in function.python_path),
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


def timed(python: Path, env: dict[str, str], statement: str) -> float:
    done = child(python, env, TIMED.format(statement=statement))
    return float(done.stdout.strip().splitlines()[-1])


def sockets_opened(python: Path, env: dict[str, str], statement: str) -> list[list[str]]:
    done = child(python, env, AUDITED.format(statement=statement))
    opened: list[list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return opened


IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)$")


@dataclass
class Imported:
    """One line of ``-X importtime``: a module, its own time and what it imported."""

    name: str
    self_us: int
    children: list[Imported]
    parent: Imported | None = None


def import_tree(python: Path, env: dict[str, str], statement: str) -> list[Imported]:
    """``-X importtime`` of ``statement`` as a tree (children are printed before parents)."""
    done = child(python, env, statement, "-X", "importtime")
    waiting: dict[int, list[Imported]] = {}
    for line in done.stderr.splitlines():
        match = IMPORTTIME.match(line)
        if not match:
            continue
        depth = len(match[3]) // 2
        node = Imported(match[4], int(match[1]), waiting.pop(depth + 1, []))
        for kid in node.children:
            kid.parent = node
        waiting.setdefault(depth, []).append(node)
    return waiting.get(0, [])


def _walk(nodes: list[Imported]) -> list[Imported]:
    found = []
    for node in nodes:
        found.append(node)
        found += _walk(node.children)
    return found


@dataclass(frozen=True)
class Offenders:
    """What the handler's import loads beyond the bare dependencies."""

    total_self_us: int
    modules: int
    third_party: list[tuple[str, str, int]]  # (module, imported by, µs beyond the bare set)
    first_party: list[tuple[str, int]]  # (module, own µs)


def offenders(python: Path, env: dict[str, str], function: Function, top: int) -> Offenders:
    """Where ``import <handler>`` spends its time beyond ``BARE``, by ``-X importtime``.

    A module's cost beyond the bare set is its own time plus that of everything it
    imported that ``BARE`` does not import. Third-party entries are the modules our code
    imports directly; first-party ones are ranked by their own time (module-level work).
    """
    bare = {node.name for node in _walk(import_tree(python, env, BARE))}
    app = _walk(import_tree(python, env, f"import {function.module}"))
    ours = FIRST_PARTY | {function.module}

    def first_party(name: str) -> bool:
        return name.split(".")[0] in ours

    def beyond(node: Imported) -> int:
        own = 0 if node.name in bare else node.self_us
        return own + sum(beyond(kid) for kid in node.children)

    extra = [node for node in app if node.name not in bare]
    entries = [
        (node.name, node.parent.name if node.parent else "-", beyond(node))
        for node in extra
        if not first_party(node.name) and (node.parent is None or first_party(node.parent.name))
    ]
    own = [(node.name, node.self_us) for node in extra if first_party(node.name)]
    return Offenders(
        total_self_us=sum(node.self_us for node in extra),
        modules=len(extra),
        third_party=sorted(entries, key=lambda entry: entry[2], reverse=True)[:top],
        first_party=sorted(own, key=lambda entry: entry[1], reverse=True)[:top],
    )


def print_offenders(found: Offenders) -> None:
    print(
        f"  -X importtime, beyond the bare dependencies: {found.modules} modules,"
        f" {found.total_self_us / 1e3:.0f} ms of their own time"
    )
    print("  third-party modules our code imports (µs incl. what they import beyond the bare set):")
    for name, parent, us in found.third_party:
        print(f"    {us:>8}  {name}  <- {parent}")
    print("  our own modules (µs of their own module-level work):")
    for name, us in found.first_party:
        print(f"    {us:>8}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--build", type=Path, default=ROOT / ".aws-sam" / "build")
    parser.add_argument("--python", type=Path, default=ROOT / ".venv-lambda" / "bin" / "python")
    parser.add_argument("--no-bytecode", action="store_true")
    parser.add_argument("--importtime", type=int, default=0, metavar="N")
    args = parser.parse_args()
    for needed in (args.build / "template.yaml", args.python):
        if not needed.exists():
            raise SystemExit(f"{needed} missing: `make packaging` builds it")
    ratios = {}
    with tempfile.TemporaryDirectory(prefix="cold-start-") as scratch:
        home = Path(scratch)
        build = args.build
        if args.no_bytecode:  # the build without its .pyc; the runtime's boto3 keeps its own
            build = home / "build"
            shutil.copytree(args.build, build, ignore=shutil.ignore_patterns("__pycache__"))
        for function in built_functions(build):
            env = environment(function, home)
            opened = sockets_opened(args.python, env, f"import {function.module}")
            if opened:
                raise SystemExit(f"{function.name}: importing the handler opened sockets: {opened}")
            app_times, bare_times = [], []
            for _ in range(args.runs):
                bare_times.append(timed(args.python, env, BARE))
                app_times.append(timed(args.python, env, f"import {function.module}"))
            app, bare = statistics.median(app_times), statistics.median(bare_times)
            ratios[function.name] = app / bare
            print(
                f"{function.name}: {app / bare:.2f}x  (import {function.module} {app * 1e3:.0f} ms"
                f" / bare dependencies {bare * 1e3:.0f} ms, median of {args.runs})",
                flush=True,
            )
            if args.importtime:
                print_offenders(offenders(args.python, env, function, args.importtime))
    worst = max(ratios, key=lambda name: ratios[name])
    verdict = "ok" if ratios[worst] <= TARGET else "over target"
    bytecode = "no .pyc, as plain sam build ships" if args.no_bytecode else "with the built .pyc"
    print(f"worst: {worst} {ratios[worst]:.2f}x (target <= {TARGET}x; {bytecode}): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
