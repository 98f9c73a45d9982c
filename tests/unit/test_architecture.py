"""Conventions turned into tests: the engine core imports no vendor SDK, the engine no dev tools."""

from __future__ import annotations

import ast
from fnmatch import fnmatch
from pathlib import Path

from signoff.models.registry import PROVIDERS
from signoff.plugins import module_of

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "signoff" / "signoff"


def _module_file(path: str) -> str:
    """``signoff.models.openai:OpenAIChat`` → ``models/openai.py``."""
    return module_of(path).removeprefix("signoff.").replace(".", "/") + ".py"


# Adapters talk to the outside world and are named after it; everything else is the core.
# Every model provider's module is an adapter: the registry lists them.
ADAPTER_PATTERNS = (
    *sorted(_module_file(provider.adapter) for provider in PROVIDERS.values()),
    "models/_http.py",
    "http_errors.py",
    "store/dynamodb/*",
    "store/s3.py",
    "queue/sqs.py",
    "secrets/aws.py",
    "continuations/aws.py",
    "channels/*",
    "aws/*",
)
FORBIDDEN = {"boto3", "botocore", "httpx"}


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


def test_the_provider_patterns_name_the_adapters_modules() -> None:
    # a registry entry whose path drifted from its file would exempt nothing
    for provider in PROVIDERS.values():
        assert (PACKAGE / _module_file(provider.adapter)).is_file(), provider.adapter
    assert "models/openai.py" in ADAPTER_PATTERNS


def test_the_check_sees_adapter_imports() -> None:
    # guards against a check that can never fail: the adapters do import them
    assert "httpx" in _imports(PACKAGE / "models" / "openai.py")
    assert "boto3" in _imports(PACKAGE / "models" / "bedrock.py")
