"""The import graph's figures: packages, modules, edges, cycles and imports that run up a layer.

    .venv/bin/python dev/import_graph.py [--edges]

Read with grimp (the graph import-linter checks), imports inside functions and under
``TYPE_CHECKING`` included. The layers, lowest first, are the ones the import
contracts in pyproject.toml hold; a top-level module of ``signoff`` that no layer
names is shared vocabulary, the lowest layer. ``--edges`` lists each upward import.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

import grimp

# Lowest first. An import from a module to one in a higher layer runs up.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # every top-level module of signoff not named below, and the settings package
    ("vocabulary", ("signoff.settings",)),
    (
        "domain",
        (
            "signoff.gate",
            "signoff.agents",
            "signoff.engine",
            "signoff.approver",
            "signoff.keys",
            "signoff.store",
            "signoff.channels",
            "signoff.models",
            "signoff.secrets",
            "signoff.queue",
            "signoff.continuations",
        ),
    ),
    ("services", ("signoff.durable", "signoff.notify", "signoff.approvals", "signoff.testing")),
    ("http", ("signoff.api", "signoff.web", "signoff.telemetry", "signoff.client")),
    ("composition", ("signoff.aws", "signoff_dev")),
]


def layer_of(module: str) -> int:
    for index, (_, roots) in enumerate(LAYERS):
        if any(module == root or module.startswith(root + ".") for root in roots):
            return index
    return 0


def sibling_cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """Strongly connected groups (of two or more) among ``package``'s children."""
    children = sorted(graph.find_children(package))
    edges: dict[str, set[str]] = defaultdict(set)
    for child in children:
        inside = {child, *graph.find_descendants(child)}
        for module in inside:
            for imported in graph.find_modules_directly_imported_by(module):
                for other in children:
                    if other != child and (imported == other or imported.startswith(other + ".")):
                        edges[child].add(other)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for child in children:
        if child not in index:
            visit(child)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edges", action="store_true", help="list every upward import")
    args = parser.parse_args(argv)
    sys.setrecursionlimit(10_000)
    graph = grimp.build_graph("signoff", "signoff_dev", cache_dir=None)
    modules = sorted(graph.modules)
    packages = [m for m in modules if graph.find_children(m)]
    top_level = [
        m for m in modules if m.count(".") == 1 and m.startswith("signoff.") and m not in packages
    ]
    edges = [(a, b) for a in modules for b in graph.find_modules_directly_imported_by(a)]
    upward = sorted((a, b) for a, b in edges if layer_of(a) < layer_of(b))
    cycles = [c for p in packages for c in sibling_cycles(graph, p)]
    print(f"packages            {len(packages)}")
    print(f"modules             {len(modules) - len(packages)}")
    print(f"top-level modules   {len(top_level)}  (signoff.*, packages apart)")
    print(f"import edges        {len(edges)}")
    print(f"sibling cycles      {len(cycles)}")
    print(f"upward imports      {len(upward)}  (layers: {' < '.join(n for n, _ in LAYERS)})")
    if args.edges:
        for a, b in upward:
            print(f"  {a} -> {b}")
    for cycle in cycles:
        print("  cycle: " + " <-> ".join(cycle))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
