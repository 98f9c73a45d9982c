"""The engine layer holds a channel type's client library exactly when such a channel is configured.

``make build`` runs ``dev/channel_libraries.py`` after sam build: a redis channel in
``agents/channels.yaml`` adds ``redis`` to the built engine layer, a database channel
``psycopg`` (with its compiled libpq), each from ``requirements-channels.txt``'s pins
and for the layer's runtime and architecture; no such channel, neither. The last test
deploys the whole path as Lambda would run it: a layer built that way, the message and
notifier functions under the Lambda runtime's stand-in, and a real redis-server and
PostgreSQL (``tests/support/services.py``) receiving the approval's row.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tomllib
import uuid
from typing import TYPE_CHECKING, Any

import boto3
import psycopg
import pytest
import redis
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from signoff.agents import AgentCatalog
from signoff.channels.database.channel import create_table_sql, quoted_table
from signoff.channels.registry import CHANNEL_TYPES
from signoff_dev.cli.check import channel_extras
from tests.packaging.test_built_handlers import (
    BUILD,
    BUILT_TEMPLATE,
    ROOT,
    body,
    built_function,
    run_built,
)
from tests.packaging.test_built_handlers import built as built
from tests.packaging.test_built_handlers import lambda_env as lambda_env
from tests.support.aws import moto_server as moto_server
from tests.support.lambdas import load_event
from tests.support.services import postgres_server as postgres_server
from tests.support.services import redis_server as redis_server

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.services import PostgresServer, RedisServer

SCRIPT = ROOT / "dev" / "channel_libraries.py"
PINS = ROOT / "layers" / "signoff" / "requirements-channels.txt"
# What each extra's library puts at the top of a layer's python/.
TOP_LEVEL = {"redis": {"redis"}, "database": {"psycopg", "psycopg_binary"}}

pytestmark = pytest.mark.slow


def _pins() -> dict[str, dict[str, Requirement]]:
    """requirements-channels.txt: extra → {name: pinned requirement}."""
    found: dict[str, dict[str, Requirement]] = {}
    for line in PINS.read_text().splitlines():
        if text := line.split("#", 1)[0].strip():
            requirement = Requirement(text)
            extra = str(requirement.marker).split("==")[1].strip().strip("\"'")
            found.setdefault(extra, {})[canonicalize_name(requirement.name)] = requirement
    return found


def test_every_channel_extra_is_pinned_inside_pyproject_ranges() -> None:
    # Given pyproject.toml's optional dependencies and the pins
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    pins = _pins()
    extras = {entry.extra for entry in CHANNEL_TYPES.values() if entry.extra}
    # Then every channel type's extra has pins, and nothing else does
    assert set(pins) == extras
    for extra in extras:
        for text in optional[extra]:
            wanted = Requirement(text)
            # And each library the extra names is pinned to one version inside its range
            pin = pins[extra][canonicalize_name(wanted.name)]
            (version,) = [spec.version for spec in pin.specifier if spec.operator == "=="]
            assert wanted.specifier.contains(version), (extra, str(wanted), version)
            # And an extra of it (psycopg[binary]) brings its distribution, at the same pin
            for inner in wanted.extras:
                companion = pins[extra][canonicalize_name(f"{wanted.name}-{inner}")]
                assert str(companion.specifier) == f"=={version}", companion


def _layer_entries(python: Path) -> set[str]:
    return {path.name for path in python.iterdir()} if python.is_dir() else set()


def test_the_built_layer_holds_no_channel_library_when_no_channel_needs_one(built: None) -> None:
    # Given the agents make build built (their channels.yaml: a webhook and an email channel)
    assert channel_extras(AgentCatalog(ROOT / "agents")) == {}
    # Then the engine layer it built holds neither redis nor psycopg
    entries = _layer_entries(BUILD / "EngineLayer" / "python")
    assert "signoff" in entries
    libraries = set().union(*TOP_LEVEL.values())
    shipped = {name for name in entries if re.split(r"[-.]", name)[0] in libraries}
    assert shipped == set(), f"channel libraries no channel needs: {sorted(shipped)}"


def _agents_with(tmp_path: Path, channels: str, name: str = "agents") -> Path:
    agents = tmp_path / name
    shutil.copytree(ROOT / "agents", agents, ignore=shutil.ignore_patterns("__pycache__"))
    config = agents / "channels.yaml"
    config.write_text(config.read_text(encoding="utf-8") + channels, encoding="utf-8")
    return agents


REDIS_CHANNEL = "  approvals-queue:\n    type: redis\n    url: {secret: approvals-redis}\n"
DATABASE_CHANNEL = "  approvals-db:\n    type: database\n    dsn: {secret: approvals-dsn}\n"


def _add_libraries(build: Path, agents: Path, architecture: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(build), str(agents), architecture],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


@pytest.mark.parametrize(("architecture", "machine"), [("x86_64", "x86_64"), ("arm64", "aarch64")])
def test_a_layer_gets_exactly_the_libraries_of_the_channels_configured(
    tmp_path: Path, architecture: str, machine: str
) -> None:
    # Given a build whose engine layer holds the engine's modules only
    build = tmp_path / "build"
    python = build / "EngineLayer" / "python"
    (python / "signoff").mkdir(parents=True)
    layer = {
        "Type": "AWS::Serverless::LayerVersion",
        "Properties": {"ContentUri": "EngineLayer"},
        "Metadata": {"BuildMethod": "python3.13", "BuildArchitecture": architecture},
    }
    (build / "template.yaml").write_text(yaml.safe_dump({"Resources": {"EngineLayer": layer}}))
    # When the agents configure a redis channel
    redis_only = _agents_with(tmp_path, REDIS_CHANNEL, "redis-agents")
    out = _add_libraries(build, redis_only, architecture)
    # Then the layer holds redis at its pin, and no psycopg
    assert f"redis{_pins()['redis']['redis'].specifier} for approvals-queue" in out
    entries = _layer_entries(python)
    assert TOP_LEVEL["redis"] <= entries
    assert not TOP_LEVEL["database"] & entries
    # When a database channel joins it
    both = _agents_with(tmp_path, REDIS_CHANNEL + DATABASE_CHANNEL, "both-agents")
    _add_libraries(build, both, architecture)
    # Then psycopg is there too, its compiled part built for Lambda's architecture
    entries = _layer_entries(python)
    assert TOP_LEVEL["redis"] | TOP_LEVEL["database"] <= entries
    (wheel,) = python.glob("psycopg_binary-*.dist-info/WHEEL")
    lines = wheel.read_text().splitlines()
    tags = [line.split(": ", 1)[1] for line in lines if line.startswith("Tag:")]
    assert tags and all(tag.startswith("cp313-cp313-manylinux") for tag in tags), tags
    assert all(tag.endswith(machine) for tag in tags), tags
    # When the channels are gone again (the sample agents)
    out = _add_libraries(build, ROOT / "agents", architecture)
    # Then so are their libraries, and the engine is as it was
    assert "no channel client library" in out
    assert _layer_entries(python) == {"signoff"}


# The built notifier, a redis and a database channel configured, writing to real servers


def _agents_notifying_row_channels(tmp_path: Path, queue: str, table: str) -> Path:
    """The sample agents, customer-service notifying a redis and a database channel only."""
    agents = _agents_with(
        tmp_path,
        REDIS_CHANNEL + f"    queueKey: {queue}\n" + DATABASE_CHANNEL + f"    table: {table}\n",
    )
    agent = agents / "customer-service" / "agent.yaml"
    text = agent.read_text(encoding="utf-8")
    sample = "  local-webhook: [approval, question]\n  local-email: [approval, question]\n"
    assert sample in text
    agent.write_text(
        text.replace(sample, "  approvals-queue: [approval]\n  approvals-db: [approval]\n"),
        encoding="utf-8",
    )
    return agents


def _build_for(tmp_path: Path, agents: Path) -> Path:
    """What make build makes for ``agents``: sam build's engine layer plus the channels'
    libraries, and the agents layer with its YAML snapshot."""
    build = tmp_path / "build"
    build.mkdir()
    shutil.copy2(BUILT_TEMPLATE, build / "template.yaml")
    shutil.copytree(BUILD / "EngineLayer", build / "EngineLayer", symlinks=True)
    done = subprocess.run(
        [sys.executable, str(ROOT / "dev" / "agents_layer.py"), str(build), str(agents)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    architecture = yaml.safe_load(BUILT_TEMPLATE.read_text())["Parameters"]["Architecture"]
    _add_libraries(build, agents, str(architecture["Default"]))
    return build


def test_the_built_notifier_writes_the_approval_row_to_redis_and_postgresql(
    lambda_env: dict[str, str],
    tmp_path: Path,
    redis_server: RedisServer,
    postgres_server: PostgresServer,
) -> None:
    # Given a deployment whose agent notifies a redis list and a PostgreSQL table
    run = uuid.uuid4().hex[:8]
    queue, table = f"signoff:built-notifier:{run}", f"built_notifier_{run}"
    build = _build_for(tmp_path, _agents_notifying_row_channels(tmp_path, queue, table))
    layer, agents_layer = build / "EngineLayer" / "python", build / "AgentsLayer"
    assert {"redis", "psycopg", "psycopg_binary"} <= _layer_entries(layer)
    message, notifier = (
        dataclasses.replace(built_function(name), python_layers=(layer,), agents=agents_layer)
        for name in ("MessageFunction", "NotifierFunction")
    )
    # And the channels' secrets in Secrets Manager, and the table an operator creates
    prefix = lambda_env.get("SIGNOFF_CHANNEL_SECRETS_PREFIX", "signoff/")
    secrets = boto3.client("secretsmanager", region_name="us-east-1")
    secrets.create_secret(Name=f"{prefix}approvals-redis", SecretString=redis_server.url)
    secrets.create_secret(Name=f"{prefix}approvals-dsn", SecretString=postgres_server.dsn())
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as connection:
        connection.execute(create_table_sql(table))
    cache = redis.Redis.from_url(redis_server.url)
    try:
        # When a refund pauses in the built message function
        request = load_event("message_post")
        (paused,) = run_built(message, lambda_env, [request]).responses
        assert paused["statusCode"] == 202, paused
        pending = body(paused)
        # And the notify queue's batch for it reaches the built notifier, in a fresh process
        batch = load_event(
            "notifier_sqs_batch", PENDING_ID=pending["id"], SESSION_ID=pending["sessionId"]
        )
        (answer,) = run_built(notifier, lambda_env, [batch]).responses
        # Then both channels took it: nothing to retry
        assert answer == {"batchItemFailures": []}, answer
        # And the redis list holds the approval's row
        (pushed,) = [json.loads(raw) for raw in cache.lrange(queue, 0, -1)]
        assert pushed["pendingId"] == pending["id"]
        assert pushed["tool"] == "issue_refund"
        # And the table holds the same approval, once
        with psycopg.connect(postgres_server.dsn()) as connection:
            rows: list[Any] = connection.execute(
                f"SELECT pending_id, tool, scope FROM {quoted_table(table)}"
            ).fetchall()
        assert [(row[0], row[1]) for row in rows] == [(pending["id"], "issue_refund")]
        assert rows[0][2]["agent"] == "customer-service"
    finally:
        cache.delete(queue, *cache.keys(f"{{{queue}}}:sent:*"))
        cache.close()
        with psycopg.connect(postgres_server.dsn(), autocommit=True) as connection:
            connection.execute(f"DROP TABLE IF EXISTS {quoted_table(table)}")
