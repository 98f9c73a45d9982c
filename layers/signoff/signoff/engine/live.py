"""Running a turn with a human attached: the live side of the pause seam.

A live approver answers a ``Paused`` outcome on the spot and the turn resumes
through the same ``Engine.resume`` a durable resolution uses; there is no
separate blocking path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from signoff.engine import Continue, Finished, Paused
from signoff.events import Done, SessionEvent

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.engine import Engine, Resolution
    from signoff.events import ApprovalPending, LoopEvent, QuestionPending
    from signoff.messages import Message

__all__ = ["LiveApprover", "run_live"]


class LiveApprover(Protocol):
    """Decides a pending approval or answers a question, right now."""

    def __call__(self, pending: ApprovalPending | QuestionPending, call_id: str) -> Resolution: ...


def run_live(
    engine: Engine,
    *,
    message: str,
    history: list[Message],
    tenant: str,
    environment: str,
    session_id: str,
    approver: LiveApprover,
    sink: Callable[[LoopEvent], None],
) -> Finished:
    """One turn, streamed to ``sink``: ``session`` first, ``done`` last."""
    sink(SessionEvent(session_id=session_id))
    outcome = engine.start(
        history=history,
        message=message,
        tenant=tenant,
        environment=environment,
        session_id=session_id,
        sink=sink,
    )
    while not isinstance(outcome, Finished):
        if isinstance(outcome, Paused):
            call_id = outcome.state.awaiting_call or ""
            resolution = approver(outcome.pending, call_id)
            outcome = engine.resume(outcome.state, history, resolution, sink=sink)
        else:
            assert isinstance(outcome, Continue)
            outcome = engine.proceed(outcome.state, history, sink=sink)
    sink(Done(text=outcome.text, stop_reason=outcome.stop_reason))
    return outcome
