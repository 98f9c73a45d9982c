"""The agent's run hooks (``hooks.py``) at a durable run's start and finish.

``Turns`` calls these where it commits the run's ``run_start`` / ``run_finish``
rows (``signoff.durable.announce``); whether they fire on the run's channel is
``signoff.run_channels.announces``' to say, inside ``signoff.agents.hooks``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.agents.hooks import RunFinish, RunStart

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.agents.hooks import Fired
    from signoff.engine import Finished
    from signoff.run_channels import RunChannel, Trigger
    from signoff.store.session_records import SessionRecord

__all__ = ["run_finished", "run_started"]


def run_started(
    agent: Agent,
    record: SessionRecord,
    run_id: str,
    trigger: Trigger,
    channel: RunChannel | None,
) -> Fired | None:
    """Start ``on_run_start`` for a run on ``record``'s session (None: nothing fired)."""
    ctx = RunStart(
        agent=agent.name,
        tenant=record.tenant,
        session_id=record.session_id,
        channel=channel,
        trigger=trigger,
        run_id=run_id,
    )
    return agent.hooks.run_started(ctx)


def run_finished(agent: Agent, record: SessionRecord, outcome: Finished) -> Fired | None:
    """Start ``on_run_finish`` for a committed genuine finish (None: nothing fired)."""
    ctx = RunFinish(
        agent=agent.name,
        tenant=record.tenant,
        session_id=record.session_id,
        channel=outcome.state.channel,
        text=outcome.text,
        stop_reason=outcome.stop_reason,
        run_id=outcome.state.run_id,
    )
    return agent.hooks.run_finished(ctx)
