"""Conventions turned into tests: the engine core imports no vendor SDK, the engine no dev tools."""

from __future__ import annotations

import ast
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

from signoff.channels.registry import CHANNEL_TYPES
from signoff.models.registry import PROVIDERS
from signoff.plugins import module_of

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "layers" / "signoff" / "signoff"
DEV_PACKAGE = ROOT / "dev" / "signoff_dev"
RUFF = Path(sys.executable).with_name("ruff")


def _module_file(path: str) -> str:
    """``signoff.models.openai:OpenAIChat`` → ``models/openai.py``."""
    return module_of(path).removeprefix("signoff.").replace(".", "/") + ".py"


# Adapters talk to the outside world and are named after it; everything else is the core.
# Every model provider's and channel type's module is an adapter: the registries list them.
ADAPTER_PATTERNS = (
    *sorted(_module_file(provider.adapter) for provider in PROVIDERS.values()),
    *sorted(_module_file(kind.channel) for kind in CHANNEL_TYPES.values()),
    "models/_http.py",
    "http_errors.py",
    # builds the channels and the HTTP client the HTTP channels share
    "channels/build.py",
    "awsclients.py",
    "store/dynamodb/*",
    "store/s3.py",
    "queue/sqs.py",
    "secrets/aws.py",
    "continuations/aws.py",
    # the Python client of a signoff API (runs in the caller's program, over httpx)
    "client/*",
)
# The vendor SDKs, and the client libraries of optional extras (a deployment without
# the extra must still import every module but that channel's).
FORBIDDEN = {"boto3", "botocore", "httpx", "redis", "psycopg"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _is_adapter(relative: str) -> bool:
    return any(fnmatch(relative, pattern) for pattern in ADAPTER_PATTERNS)


def test_core_modules_import_no_vendor_sdk() -> None:
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if _is_adapter(relative):
            continue
        leaked = _imports(path) & FORBIDDEN
        if leaked:
            offenders[relative] = sorted(leaked)
    assert offenders == {}, f"core modules importing vendor SDKs: {offenders}"


def test_the_engine_imports_no_dev_tools() -> None:
    # signoff_dev (dev/: the local stack, the CLI) is not in the Lambda layer: an
    # engine module importing it would fail there at import time.
    offenders = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if "signoff_dev" in _imports(path)
    )
    assert offenders == [], f"engine modules importing the dev package: {offenders}"
    assert not (PACKAGE / "local").exists()
    assert not (PACKAGE / "cli").exists()


def test_the_registry_patterns_name_the_adapters_modules() -> None:
    # a registry entry whose path drifted from its file would exempt nothing
    for provider in PROVIDERS.values():
        assert (PACKAGE / _module_file(provider.adapter)).is_file(), provider.adapter
    assert "models/openai.py" in ADAPTER_PATTERNS
    for kind in CHANNEL_TYPES.values():
        assert (PACKAGE / _module_file(kind.channel)).is_file(), kind.channel
    assert "channels/slack/channel.py" in ADAPTER_PATTERNS


def test_the_check_sees_adapter_imports() -> None:
    # guards against a check that can never fail: the adapters do import them
    assert "httpx" in _imports(PACKAGE / "models" / "openai.py")
    assert "boto3" in _imports(PACKAGE / "models" / "bedrock.py")
    assert "redis" in _imports(PACKAGE / "channels" / "database" / "redis.py")


def test_every_package_folder_is_a_regular_package() -> None:
    # import-linter (`make lint`) sees only regular packages: grimp skips a folder
    # without __init__.py and every import in it, so a contract about it would hold
    # without checking anything (api/ and durable/ were such folders).
    folders = [
        folder
        for root in (PACKAGE, DEV_PACKAGE)
        for folder in (root, *root.rglob("*"))
        if folder.is_dir() and any(folder.glob("*.py"))
    ]
    missing = sorted(
        folder.relative_to(ROOT).as_posix()
        for folder in folders
        if not (folder / "__init__.py").is_file()
    )
    assert missing == [], f"folders of modules without __init__.py: {missing}"


# A route module as a contributor writes it: postponed annotations, the body model
# imported for the route's signature only.
NEW_ROUTE_MODULE = """\
\"\"\"``POST /things/{id}``: a route no per-file ignore names.\"\"\"

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from signoff.api.models import AnswerBody

__all__ = ["router"]

router = Router()


@router.post("/things/<id>")
def add_thing(id: str, body: AnswerBody) -> dict[str, str]:
    return {"id": id, "answer": body.answer}
"""
# The same import used only by a helper's annotation: a type-only import ruff flags.
HELPER_MODULE = NEW_ROUTE_MODULE.replace('@router.post("/things/<id>")\n', "")


def _ruff(source: str, path: Path) -> subprocess.CompletedProcess[str]:
    """``ruff check`` with the project's settings on ``source`` as the file ``path``."""
    return subprocess.run(
        [str(RUFF), "check", "--no-cache", "--stdin-filename", str(path), "-"],
        input=source,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_new_route_module_needs_no_lint_ignore() -> None:
    # Given a new route module under api/ that no per-file ignore names
    path = PACKAGE / "api" / "things.py"
    # When ruff checks it with the project's settings
    result = _ruff(NEW_ROUTE_MODULE, path)
    # Then it passes: Powertools reads the route's signature at run time, so the
    # body model's import must stay a real import, and ruff knows it from the
    # router's decorator (runtime-evaluated-decorators), not from a list of modules
    assert result.returncode == 0, result.stdout + result.stderr
    # And the same import used only by a helper's annotation is still flagged
    flagged = _ruff(HELPER_MODULE, path)
    assert "TC001" in flagged.stdout, flagged.stdout + flagged.stderr


def test_every_declared_inbound_route_is_served() -> None:
    # chat_from_env keeps the channels of the types that declare a route; a route that
    # drifted from the API would leave that type's clicks unverifiable
    import json

    paths = json.loads((ROOT / "openapi.json").read_text())["paths"]
    declared = {kind.inbound for kind in CHANNEL_TYPES.values() if kind.inbound}
    assert declared == {"/slack/interactions", "/lark/callback"}
    for route in declared:
        assert "post" in paths[route], route
