"""YAML documents, parsed from the text or taken from a build-time snapshot of their parse.

``make build`` writes ``yaml-snapshot.json`` into the agents layer: the parse of
every YAML document a cold start reads (``channels.yaml``, ``people.yaml``, each
``agent.yaml`` and ``actauth.yml``, the skills' frontmatter, a scripted agent's
script), recorded by loading the agents as a cold start does
(``signoff.agents.snapshot``). A deployed function installs it (``use_snapshot``) and then neither
imports PyYAML nor parses: each document is looked up by the SHA-256 of its text and
of the parser, so an edited file — or a snapshot of other files — misses and is
parsed as ever, and a document whose parse JSON cannot carry exactly (dates, sets,
non-string keys) is not in the snapshot. What the parse feeds (the pydantic
checks, the errors they report) is the same either way. Locally (``signoff dev``,
``signoff run``) no snapshot is installed: YAML is parsed.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from yaml import YAMLError as YAMLError

__all__ = [
    "SNAPSHOT_FILE",
    "YAMLError",
    "forget_snapshot",
    "key_mark",
    "parse",
    "recording",
    "safe_load",
    "snapshot_entries",
    "use_snapshot",
]

# In the agents folder as built (/opt at run time); never in the sources.
SNAPSHOT_FILE: Final = "yaml-snapshot.json"
_VERSION: Final = 1

# key (parser, SHA-256 of the text) -> the parse, as JSON text (each lookup decodes
# its own copy, so a caller that changes what it got changes no one else's).
_KNOWN: dict[str, str] = {}
_recorded: dict[str, str] | None = None


def __getattr__(name: str) -> Any:
    # ``except yamldocs.YAMLError`` imports PyYAML only when an exception reaches it.
    if name == "YAMLError":
        import yaml

        return yaml.YAMLError
    raise AttributeError(name)


def parse(text: str, kind: str, parser: Callable[[str], Any]) -> Any:
    """``parser(text)``, or the snapshot's record of it; ``kind`` names the parser.

    Raises:
        Whatever ``parser`` raises (a snapshot holds only parses that succeeded).
    """
    key = f"{kind}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"
    known = _KNOWN.get(key)
    if known is not None:
        return json.loads(known)
    data = parser(text)
    if _recorded is not None:
        encoded = _exact_json(data)
        if encoded is not None:
            _recorded[key] = encoded
    return data


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, through the snapshot."""
    return parse(text, "safe", _safe_load)


def _safe_load(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


def use_snapshot(path: Path) -> int:
    """Install the snapshot at ``path``; how many parses it holds.

    A missing, unreadable or malformed snapshot installs nothing: every document is
    parsed from its text, as without one.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return 0
    if not isinstance(raw, dict) or raw.get("version") != _VERSION:
        return 0
    entries = raw.get("parsed")
    if not isinstance(entries, dict):
        return 0
    good = {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, str)}
    _KNOWN.update(good)
    return len(good)


def forget_snapshot() -> None:
    """Drop every installed parse (tests; a process installs one snapshot)."""
    _KNOWN.clear()


@contextmanager
def recording() -> Iterator[dict[str, str]]:
    """Records every parse made inside it that JSON carries exactly (what a snapshot holds)."""
    global _recorded
    found: dict[str, str] = {}
    outer, _recorded = _recorded, found
    try:
        yield found
    finally:
        _recorded = outer


def snapshot_entries(parsed: dict[str, str]) -> str:
    """The snapshot file's text for ``parsed`` (from ``recording``)."""
    return json.dumps({"version": _VERSION, "parsed": dict(sorted(parsed.items()))}, indent=0)


def _exact_json(data: Any) -> str | None:
    """``data`` as JSON when decoding it gives back the very same values and types."""
    try:
        encoded = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return encoded if _same(json.loads(encoded), data) else None


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def key_mark(text: str, *path: str) -> tuple[int, int] | None:
    """The 1-based line and column of the mapping key at ``path`` in the YAML ``text``.

    For an error message about a document already parsed: PyYAML is imported only
    when one is worded (a deployed cold start reads the snapshot). None when the
    text does not parse or holds no such key.
    """
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    mark = None
    for key in path:
        if not isinstance(node, yaml.MappingNode):
            return None
        found = [(k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key]
        if not found:
            return None
        mark, node = found[0][0].start_mark, found[0][1]
    return (mark.line + 1, mark.column + 1) if mark is not None else None
