"""Where in a YAML file a problem is: ``file:line`` for ``signoff check``'s messages.

A ``ConfigError`` names a file and a field path (``rules[3].tool``,
``notify.local-email.1``); an editor jumps to ``file:line``. The line is found by
walking the field path through the file's YAML nodes (the nearest existing node
when the path runs past what the file holds), or read from a YAML error's
``(line N, column M)``.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

__all__ = ["located", "warning_at", "yaml_line"]

_SEGMENT = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")
_RULE_NAME = re.compile(r" '[^']*'")
_YAML_MARK = re.compile(r"\(line (\d+), column \d+\)")
_MARK_IN_TEXT = re.compile(r"line (\d+), column \d+")
# A rule warning's field path: `rules[2] 'name'.when.field: …` → rules[2].when.field
_WARNING_PATH = re.compile(r"^(rules\[\d+\])(?: '[^']*')?((?:\.[\w-]+|\[\d+\])*):")


def yaml_line(file: str, field: str) -> int | None:
    """The 1-based line of ``field`` in the YAML ``file``, or None if it cannot tell."""
    path = Path(file)
    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        return None
    try:
        node = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    if node is None:
        return None
    line = node.start_mark.line + 1
    # A rule's name may follow its index (`rules[2] 'refund'.tool`): not a key.
    for index, key in _SEGMENT.findall(_RULE_NAME.sub("", field)):
        child = _child(node, index, key)
        if child is None:
            break
        line, node = child
    return line


def _child(node: yaml.Node, index: str, key: str) -> tuple[int, yaml.Node] | None:
    if isinstance(node, yaml.SequenceNode) and (index or key.isdigit()):
        position = int(index or key)
        if position < len(node.value):
            item = node.value[position]
            return item.start_mark.line + 1, item
    if isinstance(node, yaml.MappingNode) and key:
        for name, value in node.value:
            if isinstance(name, yaml.ScalarNode) and name.value == key:
                return name.start_mark.line + 1, value
    return None


def located(file: str, field: str, problem: str) -> str:
    """``file:line: field: problem`` (``file: …`` when no line is known)."""
    mark = _YAML_MARK.search(problem) or (None if field else _MARK_IN_TEXT.search(problem))
    line = int(mark.group(1)) if mark else yaml_line(file, field)
    where = f"{file}:{line}" if line else file
    return f"{where}: {field}: {problem}" if field else f"{where}: {problem}"


def warning_at(file: str, warning: str) -> str:
    """``file:line: <warning>`` for a rule warning (``<where>: <what>``) about ``file``."""
    found = _WARNING_PATH.match(warning)
    line = yaml_line(file, found.group(1) + found.group(2)) if found else None
    return f"{file}:{line}: {warning}" if line else f"{file}: {warning}"
