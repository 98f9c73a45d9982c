"""Wiring ``Turns`` over a store for tests, and the ``clock`` and ``store`` fixtures
(each store adapter in turn: memory, then DynamoDB on moto) a test module imports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from signoff.clock import ManualClock
from signoff.durable.turns import Turns
from signoff.store.dynamodb import DynamoStore
from signoff.store.memory import MemoryStore

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.models.base import ModelCall

Store = MemoryStore | DynamoStore


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=["memory", "dynamodb"])
def store(request: pytest.FixtureRequest, clock: ManualClock) -> Store:
    if request.param == "memory":
        return MemoryStore(clock=clock)
    request.getfixturevalue("aws")
    return DynamoStore.from_env(clock=clock)


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
