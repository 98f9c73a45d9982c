"""A run's lifecycle announcements, as the outbox rows its commits carry.

When the agent's ``notify`` asks for ``run_start``, the first commit of a run
started by a message, or resumed by a resolution, carries its ``info`` rows; a
genuine finish (done, max_turns, denied) carries the ``result`` rows of
``run_finish``. A pause announces no finish, and a continuation (``proceed``) no
start: the run was announced when it began. Nobody waits on a scheduled run, so
this is how its outcome is told.

Where a run announces anything is ``signoff.run_channels.announces``' to say, the
one rule ``hooks.py``'s run hooks follow too: never a run on ``cli`` or
``http_stream`` (its caller sees ``session`` and ``done`` on the stream), and a
resumed run counts as the channel it started on (``TurnState.channel``).

The rows ride in the turn's own commits, so nothing is announced that was not
committed; a row's subject makes it happen once per channel however often it is
written (``signoff.channels.subject``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from signoff.channels.subject import Subject
from signoff.notify import lifecycle
from signoff.run_channels import announces

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.clock import Clock
    from signoff.engine import Finished
    from signoff.run_channels import RunChannel
    from signoff.store.pending_records import OutboxRow
    from signoff.store.session_records import SessionRecord

__all__ = ["Announcements"]


@dataclass(frozen=True, kw_only=True)
class Announcements:
    """The announcement rows of runs, kept for ``retention`` seconds."""

    clock: Clock
    retention: float

    def run_start(
        self,
        agent: Agent,
        record: SessionRecord,
        run_id: str,
        trigger: lifecycle.Trigger,
        *,
        channel: RunChannel | None,
        pending_id: str | None = None,
    ) -> list[OutboxRow]:
        """The ``run_start`` rows of a run on ``channel``, for the channels that want them."""
        channels = lifecycle.subscribers(agent.config.notify, "run_start")
        if not channels or not announces(channel):
            return []
        now = self.clock.now().timestamp()
        note = lifecycle.run_started(
            agent=agent.name, session=record, run_id=run_id, trigger=trigger, pending_id=pending_id
        )
        subject = Subject.run_start(run_id, pending_id)
        return lifecycle.rows(subject, note, channels, now=now, retain_until=now + self.retention)

    def run_finish(
        self, agent: Agent, record: SessionRecord, outcome: Finished, now: float
    ) -> list[OutboxRow]:
        """The ``run_finish`` rows of a genuine finish, for the channels that want them."""
        channels = lifecycle.subscribers(agent.config.notify, "run_finish")
        if not channels or not announces(outcome.state.channel):
            return []
        run_id = outcome.state.run_id
        note = lifecycle.run_finished(
            agent=agent.name,
            session=record,
            run_id=run_id,
            text=outcome.text,
            stop_reason=outcome.stop_reason,
        )
        subject = Subject.run_finish(run_id)
        return lifecycle.rows(subject, note, channels, now=now, retain_until=now + self.retention)
