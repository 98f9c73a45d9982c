"""A turn in a process of its own, for tests that kill it: ``python -m tests.support.crash_child``.

Arguments: agents dir, agent, session id, message. The store is DynamoDB at
``AWS_ENDPOINT_URL`` (a moto server), named by ``SIGNOFF_TABLE`` / ``SIGNOFF_BUCKET``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from signoff.agents import AgentCatalog
from signoff.clock import SystemClock
from signoff.durable.turns import Turns
from signoff.models.factory import build_model
from signoff.queue.memory import MemoryQueue
from signoff.store.dynamodb import DynamoStore

LEASE_TTL = 1.0


def turns(agents: Path, owner: str) -> Turns:
    store = DynamoStore.from_env()
    return Turns(
        catalog=AgentCatalog(agents),
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=MemoryQueue(),
        clock=SystemClock(),
        model_for=lambda agent: build_model(agent.config.model, agent.directory),
        owner=owner,
        lease_ttl=LEASE_TTL,
    )


if __name__ == "__main__":
    agents_dir, agent, session_id, message = sys.argv[1:5]
    turns(Path(agents_dir), "child").send(
        agent, message, tenant="t", environment="e", session_id=session_id
    )
