"""Skills: ``skills/<name>/SKILL.md`` files whose index goes into the system prompt.

Only the index (name and description from the frontmatter) is always in the
prompt; the body is loaded when the model asks for it with the ``Skill`` tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from signoff import yamldocs
from signoff.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Skill", "discover_skills", "skills_index"]


@dataclass(frozen=True, kw_only=True)
class Skill:
    name: str
    description: str
    body: str


def discover_skills(directory: Path) -> dict[str, Skill]:
    """Every ``<directory>/*/SKILL.md``, keyed by skill name.

    Raises:
        ConfigError: a SKILL.md without valid ``name`` / ``description`` frontmatter.
    """
    skills: dict[str, Skill] = {}
    if not directory.is_dir():
        return skills
    for path in sorted(directory.glob("*/SKILL.md")):
        skill = _parse(path)
        if skill.name in skills:
            raise ConfigError(str(path), "name", f"duplicate skill name {skill.name!r}")
        skills[skill.name] = skill
    return skills


def skills_index(skills: dict[str, Skill]) -> str:
    """The lines the system prompt gets about the available skills."""
    if not skills:
        return ""
    lines = ["Skills (load one with the Skill tool before following it):"]
    lines += [f"- {s.name}: {s.description}" for s in skills.values()]
    return "\n".join(lines)


def _parse(path: Path) -> Skill:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        raise ConfigError(
            str(path), "frontmatter", "must start with a '---' YAML frontmatter block"
        )
    try:
        _, front, body = text.split("---", 2)
        meta = yamldocs.safe_load(front) or {}
    except (ValueError, yamldocs.YAMLError) as exc:
        raise ConfigError(str(path), "frontmatter", f"unreadable: {exc}") from exc
    if not isinstance(meta, dict):
        raise ConfigError(str(path), "frontmatter", "must be a mapping")
    for key in ("name", "description"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise ConfigError(str(path), key, "is required and must be a non-empty string")
    return Skill(
        name=meta["name"].strip(), description=meta["description"].strip(), body=body.strip()
    )
