"""The engine layer holds the engine only, and needs what pyproject.toml says.

``sam build`` copies the layer's ``ContentUri`` (layers/signoff/) whole and installs
its ``requirements.txt`` beside it, so two things can drift without any other test
noticing: dev-only code landing in that folder (it would ship to every function),
and the layer's requirements falling out of step with ``pyproject.toml``'s
dependencies (the dev environment would test against another set than Lambda runs).
"""

from __future__ import annotations

import tomllib
from typing import TYPE_CHECKING

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.packaging.test_built_handlers import BUILD, ROOT
from tests.packaging.test_built_handlers import built as built

if TYPE_CHECKING:
    from pathlib import Path

ENGINE = ROOT / "layers" / "signoff" / "signoff"
DEV = ROOT / "dev" / "signoff_dev"
LAYER_REQUIREMENTS = ROOT / "layers" / "signoff" / "requirements.txt"
RUNTIME_REQUIREMENTS = ROOT / "requirements-lambda-runtime.txt"
BUILT_ENGINE = BUILD / "EngineLayer" / "python" / "signoff"
# The layer pins boto3 on purpose (requirements.txt says why): to the runtime's own pin.
PINNED_IN_LAYER = "boto3"


def _requirements(lines: list[str]) -> dict[str, Requirement]:
    parsed = [Requirement(line.split("#", 1)[0]) for line in lines if line.split("#", 1)[0].strip()]
    return {canonicalize_name(requirement.name): requirement for requirement in parsed}


def _file_requirements(path: Path) -> dict[str, Requirement]:
    return _requirements(path.read_text().splitlines())


def requirement_drift(
    project: dict[str, Requirement],
    layer: dict[str, Requirement],
    runtime: dict[str, Requirement],
) -> list[str]:
    """How the layer's requirements differ from the project's dependencies (none: ``[]``).

    Every dependency is in the layer with the same extras and specifier, and nothing
    else is; only boto3 differs: the layer pins the runtime's version, which must
    satisfy the project's range.
    """
    problems = [f"{name}: in pyproject.toml, not in the layer" for name in project.keys() - layer]
    problems += [f"{name}: in the layer, not in pyproject.toml" for name in layer.keys() - project]
    for name in sorted(project.keys() & layer.keys()):
        wanted, shipped = project[name], layer[name]
        if wanted.extras != shipped.extras:
            problems.append(f"{name}: extras {sorted(shipped.extras)} != {sorted(wanted.extras)}")
        if name == PINNED_IN_LAYER:
            pins = [spec.version for spec in shipped.specifier if spec.operator == "=="]
            runtime_pins = [spec.version for spec in runtime[name].specifier]
            if len(pins) != 1 or pins != runtime_pins:
                problems.append(
                    f"{name}: the layer pins {shipped.specifier}, the runtime {runtime_pins}"
                )
            elif not wanted.specifier.contains(pins[0]):
                problems.append(f"{name}: the layer's {pins[0]} is outside {wanted.specifier}")
        elif wanted.specifier != shipped.specifier:
            problems.append(
                f"{name}: the layer has '{shipped.specifier}', pyproject '{wanted.specifier}'"
            )
    return problems


def test_the_layer_requires_what_pyproject_depends_on() -> None:
    # Given pyproject.toml's dependencies, the layer's requirements and the runtime's pin
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = _requirements(pyproject["project"]["dependencies"])
    layer = _file_requirements(LAYER_REQUIREMENTS)
    runtime = _file_requirements(RUNTIME_REQUIREMENTS)
    # Then they name the same distributions with the same ranges (boto3: the runtime's pin)
    assert requirement_drift(project, layer, runtime) == [], (
        "edit layers/signoff/requirements.txt and pyproject.toml's dependencies together"
    )


PIN = "boto3==1.40.0"


@pytest.mark.parametrize(
    ("layer_lines", "problem"),
    [
        (
            ["pydantic>=2.7", PIN],
            "pydantic: the layer has '>=2.7', pyproject '<3,>=2.7'",
        ),
        (["pydantic>=2.7,<3"], "boto3: in pyproject.toml, not in the layer"),
        (
            ["pydantic>=2.7,<3", PIN, "redis>=5"],
            "redis: in the layer, not in pyproject.toml",
        ),
        (
            ["pydantic>=2.7,<3", "boto3>=1.34"],
            "boto3: the layer pins >=1.34, the runtime ['1.40.0']",
        ),
        (["pydantic[email]>=2.7,<3", PIN], "pydantic: extras ['email'] != []"),
    ],
)
def test_a_drifted_layer_is_reported(layer_lines: list[str], problem: str) -> None:
    # Given a project and a runtime, and a layer that differs from them in one way
    project = _requirements(["pydantic>=2.7,<3", "boto3>=1.34"])
    runtime = _requirements([PIN])
    # Then the difference is named
    assert requirement_drift(project, _requirements(layer_lines), runtime) == [problem]


def _modules(package: Path, name: str) -> set[str]:
    """Dotted names of the ``.py`` modules under ``package``, imported as ``name``."""
    found = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.add(".".join((name, *parts)))
    return found


def test_the_built_layer_holds_the_engine_and_no_dev_code(built: None) -> None:
    # Given the engine layer as sam build left it
    assert BUILT_ENGINE.is_dir(), f"{BUILT_ENGINE} missing: run `make packaging`"
    built_modules = _modules(BUILT_ENGINE, "signoff")
    # Then none of the dev package's modules is in it, under either name (the local
    # stack, its load harness, the CLI)
    dev_modules = _modules(DEV, "signoff_dev")
    as_engine = {name.replace("signoff_dev", "signoff", 1) for name in dev_modules}
    shipped_dev = sorted((as_engine - {"signoff"}) & built_modules)
    assert shipped_dev == [], f"dev-only modules in the engine layer: {shipped_dev}"
    assert not (BUILT_ENGINE.parent / "signoff_dev").exists()
    # And no file but modules, their bytecode and the typing marker (no static files)
    others = sorted(
        path.relative_to(BUILT_ENGINE).as_posix()
        for path in BUILT_ENGINE.rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and path.name != "py.typed"
    )
    assert others == [], f"files other than modules in the engine layer: {others}"
