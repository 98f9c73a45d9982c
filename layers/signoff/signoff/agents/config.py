"""``agent.yaml``: the validated shape of an agent's configuration."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

from signoff.models.settings import ModelSettings

__all__ = [
    "NOTIFY_EVENTS",
    "AgentConfig",
    "BudgetSettings",
    "ScheduleSettings",
    "notify_shorthand",
    "seconds",
]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds(value: Any) -> Any:
    """``"24h"``, ``"30m"``, ``"90s"``, ``"2d"`` or a number of seconds → seconds."""
    if isinstance(value, str):
        found = _DURATION.match(value)
        if not found:
            raise ValueError("a duration like '90s', '30m', '24h', '2d' or a number of seconds")
        return float(found.group(1)) * _UNIT[found.group(2)]
    return value


Duration = Annotated[float, BeforeValidator(seconds), Field(gt=0)]


class _Config(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )


class BudgetSettings(_Config):
    tokens: int = Field(default=8000, gt=0)
    nudge_at: float = Field(default=0.8, gt=0, le=1)


class ScheduleSettings(_Config):
    """An EventBridge schedule that sends the agent a message."""

    expression: str
    message: str
    tenant: str = "default"


NotifyEvent = Literal["approval", "question", "run_start", "run_finish", "stuck"]
NOTIFY_EVENTS: tuple[NotifyEvent, ...] = get_args(NotifyEvent)


def notify_shorthand(value: Any) -> Any:
    """``notify: console`` or ``notify: [a, b]`` → every event to each named channel.

    Seed 004's ``notify: <name>`` means all kinds; the mapping form
    (``{name: [events]}``) picks them, and is needed for an approval-only channel
    (redis, database), which refuses the other events.
    """
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(name, str) for name in value):
        return {name: list(NOTIFY_EVENTS) for name in value}
    return value


class AgentConfig(_Config):
    """The contents of ``agents/<name>/agent.yaml``."""

    description: str = ""
    system: str
    model: ModelSettings = ModelSettings()
    max_turns: int = Field(default=10, gt=0, le=1000)
    budget: BudgetSettings = BudgetSettings()
    approval_timeout: Duration = 86400.0
    remind_after: Duration | None = None
    session_key: str | None = None
    # ``{name: [events]}``; ``name`` or ``[names]`` is every event (``notify_shorthand``).
    notify: Annotated[dict[str, list[NotifyEvent]], BeforeValidator(notify_shorthand)] = Field(
        default_factory=dict
    )
    schedule: ScheduleSettings | None = None
