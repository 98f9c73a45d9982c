"""Where a paused call was asked: its tenant, environment and agent (``PendingScope``).

An ``approval:pending`` event carries it and a pending item keeps it; it lives
apart from ``signoff.events`` (every loop event, which re-exports it) so a path
that reads pending items loads none of the events.
"""

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["PendingScope"]


class PendingScope(BaseModel):
    # the loop events' config (``signoff.events``): part of their wire form
    model_config = ConfigDict(
        defer_build=True,
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
    )

    tenant: str
    environment: str
    agent: str
