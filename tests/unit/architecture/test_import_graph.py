"""The import graph's shape: few top-level modules, no cycle, no import running up a layer.

The figures come from ``dev/import_graph.py`` (grimp, the graph import-linter checks),
the command the docs give for them.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import grimp
import pytest

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]
# The edges of the top level: telemetry and the SDK helpers the adapters share (the
# caller's client is a package, in the http layer). Everything else at the top is
# vocabulary the core contract covers.
EDGES = {"signoff.telemetry", "signoff.awsclients", "signoff.http_errors"}


@pytest.fixture(scope="module")
def figures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "dev" / "import_graph.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("signoff", "signoff_dev", cache_dir=None)


def _top_level(graph: grimp.ImportGraph) -> set[str]:
    return {
        m
        for m in graph.modules
        if m.count(".") == 1 and m.startswith("signoff.") and not graph.find_children(m)
    }


def test_the_top_level_keeps_at_most_fifteen_modules(graph: grimp.ImportGraph) -> None:
    assert len(_top_level(graph)) <= 15, sorted(_top_level(graph))


def test_no_import_runs_up_a_layer(figures: ModuleType, graph: grimp.ImportGraph) -> None:
    upward = [
        (a, b)
        for a in graph.modules
        for b in graph.find_modules_directly_imported_by(a)
        if figures.layer_of(a) < figures.layer_of(b)
    ]
    assert upward == []


def test_the_layer_check_sees_an_upward_import(figures: ModuleType) -> None:
    # guards against a check that cannot fail: the vocabulary sits below the domain
    assert figures.layer_of("signoff.clock") < figures.layer_of("signoff.store.base")
    assert figures.layer_of("signoff.store.base") < figures.layer_of("signoff.durable.turns")
    assert figures.layer_of("signoff.api.app") < figures.layer_of("signoff.aws.turns")


def test_no_package_has_a_cycle(figures: ModuleType, graph: grimp.ImportGraph) -> None:
    packages = [m for m in graph.modules if graph.find_children(m)]
    assert [c for p in packages for c in figures.sibling_cycles(graph, p)] == []


def test_every_package_is_in_a_layer(figures: ModuleType, graph: grimp.ImportGraph) -> None:
    named = {root for _, roots in figures.LAYERS for root in roots}
    packages = {m for m in graph.find_children("signoff") if graph.find_children(m)}
    assert packages <= named, sorted(packages - named)


def test_the_core_contract_covers_the_vocabulary(graph: grimp.ImportGraph) -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    core = next(c for c in contracts["contracts"] if c["id"] == "core")
    modules = core["source_modules"]
    listed = {m for m in modules if m in graph.modules and not graph.find_children(m)}
    assert _top_level(graph) - EDGES == listed
