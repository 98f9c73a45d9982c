"""``-X importtime`` reports read as trees: what a handler's import spends beyond its reference.

``bench/cold_start.py --importtime N`` prints it; this module only parses and ranks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)$")


@dataclass
class Imported:
    """One line of ``-X importtime``: a module, its own time and what it imported."""

    name: str
    self_us: int
    children: list[Imported]
    parent: Imported | None = None


def import_tree(stderr: str) -> list[Imported]:
    """``-X importtime``'s report (a process's stderr) as a tree (children print first)."""
    waiting: dict[int, list[Imported]] = {}
    for line in stderr.splitlines():
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


def offenders(app_report: str, reference_report: str, ours: set[str], top: int) -> Offenders:
    """Where the handler's import spends its time beyond its reference's, from the two
    processes' ``-X importtime`` reports; ``ours``: the top-level packages that are ours.

    A module's cost beyond the reference is its own time plus that of everything it
    imported that the reference does not import. Third-party entries are the modules our
    code imports directly; first-party ones are ranked by their own time (module-level
    work).
    """
    bare = {node.name for node in _walk(import_tree(reference_report))}
    app = _walk(import_tree(app_report))

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
        f"  -X importtime, beyond the reference: {found.modules} modules,"
        f" {found.total_self_us / 1e3:.0f} ms of their own time"
    )
    print(
        "  third-party modules our code imports (µs incl. what they import beyond the reference):"
    )
    for name, parent, us in found.third_party:
        print(f"    {us:>8}  {name}  <- {parent}")
    print("  our own modules (µs of their own module-level work):")
    for name, us in found.first_party:
        print(f"    {us:>8}  {name}")
