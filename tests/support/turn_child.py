"""A message's turn in a process of its own, wired as the message function wires it.

``python -m tests.support.turn_child AGENT SESSION MESSAGE``: the deployment comes
from the ``SIGNOFF_*`` environment (``Deployment.from_env``, the session lease
included) and the turn runs through ``signoff.aws.turns.turns_from_env`` against
DynamoDB at ``AWS_ENDPOINT_URL`` (a moto server), so a test can kill it mid-call.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from signoff.aws.turns import checked_agents, turns_from_env
from signoff.clock import SystemClock
from signoff.queue.memory import MemoryQueue
from signoff.settings import Deployment
from signoff.store.dynamodb import DynamoStore

if TYPE_CHECKING:
    from signoff.clock import Clock
    from signoff.durable.turns import Turns


def deployed_turns(clock: Clock | None = None) -> Turns:
    """Turns as a function builds them from its environment (a memory queue for SQS), on
    ``clock`` (None: the system's)."""
    deployment = Deployment.from_env()
    clock = clock or SystemClock()
    store = DynamoStore.from_env(clock=clock, deployment=deployment)
    return turns_from_env(
        deployment,
        agents=checked_agents(deployment),
        store=store,
        queue=MemoryQueue(),
        clock=clock,
    )


if __name__ == "__main__":
    agent, session_id, message = sys.argv[1:4]
    deployed_turns().send(agent, message, tenant="t", environment="e", session_id=session_id)
