"""A loaded agent: its configuration plus the tools, rules and skills it runs with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from signoff.agents.hooks import NO_HOOKS, Hooks
from signoff.agents.skills import skills_index
from signoff.budget import Budget

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.agents.config import AgentConfig
    from signoff.agents.skills import Skill
    from signoff.gate import RuleSet
    from signoff.gate.people import People
    from signoff.tools import Tool

__all__ = ["Agent"]


@dataclass(frozen=True, kw_only=True)
class Agent:
    name: str
    directory: Path
    config: AgentConfig
    tools: dict[str, Tool]
    rules: RuleSet
    skills: dict[str, Skill]
    # The functions of the folder's hooks.py (none without one).
    hooks: Hooks = field(default=NO_HOOKS)
    # The file the rules come from (actauth.yml, or agent.yaml's inline rules; None
    # without rules) and what may be a typo in them, `<where>: <what>`
    # (signoff.agents.lint): the agent loads and serves, a cold start logs them.
    rules_file: Path | None = None
    warnings: tuple[str, ...] = ()
    # The deployment's people (people.yaml), for an agent whose rules count votes
    # by person (``AgentCatalog`` sets it); None: every actor counts as itself.
    people: People | None = None

    @property
    def system_prompt(self) -> str:
        """The configured prompt followed by the skills index, if any."""
        index = skills_index(self.skills)
        return f"{self.config.system.strip()}\n\n{index}" if index else self.config.system.strip()

    @property
    def budget(self) -> Budget:
        return Budget(tokens=self.config.budget.tokens, nudge_at=self.config.budget.nudge_at)

    @property
    def max_turns(self) -> int:
        return self.config.max_turns
