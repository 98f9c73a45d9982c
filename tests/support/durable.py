"""Wiring ``Turns`` over a store for tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from signoff.durable.turns import Turns

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.clock import ManualClock
    from signoff.models.base import ModelCall


@dataclass
class StaticAgents:
    """A fixed set of agents, each with its own model."""

    agents: dict[str, tuple[Agent, ModelCall]]

    def get(self, name: str) -> Agent:
        return self.agents[name][0]

    def model_for(self, agent: Agent) -> ModelCall:
        return self.agents[agent.name][1]


def turns_over(
    store: Any, queue: Any, agents: StaticAgents, clock: ManualClock, **kwargs: Any
) -> Turns:
    return Turns(
        catalog=agents,
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=queue,
        clock=clock,
        model_for=agents.model_for,
        **kwargs,
    )
