"""The continuations port: how a turn that stopped before its deadline goes on.

A turn near the end of its Lambda invocation checkpoints and stops (``DESIGN.md``
§5.5); ``schedule`` starts a fresh invocation that claims the session and
continues it. That invocation receives a continuation event::

    {"signoff": "continue", "sessionId": "<session id>"}

``continuation_event`` builds it and ``continuation_session`` recognises it, so
the sender and the handler share one definition of the shape.
"""

from collections.abc import Mapping
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from signoff.errors import UsageError

__all__ = [
    "CONTINUE",
    "ContinuationEvent",
    "Continuations",
    "continuation_event",
    "continuation_session",
]

# The value of the event's "signoff" field that marks a continuation.
CONTINUE: Final = "continue"


class ContinuationEvent(BaseModel):
    """The event a continuing invocation receives."""

    # Other fields are ignored: the Lambda runtime or a later version may add some.
    model_config = ConfigDict(defer_build=True, populate_by_name=True, extra="ignore", frozen=True)

    signoff: Literal["continue"] = CONTINUE
    session_id: str = Field(alias="sessionId", min_length=1)


class Continuations(Protocol):
    def schedule(self, session_id: str) -> None:
        """Start a fresh invocation that continues the session's turn.

        Raises:
            UsageError: ``session_id`` is empty.
            StoreUnavailable: the invocation could not be started; the turn's
                lease runs out and the sweeper re-drives it.
        """


def continuation_event(session_id: str) -> dict[str, str]:
    """The event that continues ``session_id``, as the invoked function receives it.

    Raises:
        UsageError: ``session_id`` is empty.
    """
    if not session_id:
        raise UsageError("a continuation needs a session id")
    return ContinuationEvent(session_id=session_id).model_dump(by_alias=True)


def continuation_session(event: Mapping[str, Any]) -> str | None:
    """The session a continuation event continues, or None for any other event.

    Raises:
        UsageError: the event is marked as a continuation but names no session;
            handing it on as some other kind of event would hide the fault.
    """
    if not isinstance(event, Mapping) or event.get("signoff") != CONTINUE:
        return None
    try:
        return ContinuationEvent.model_validate(event).session_id
    except ValidationError as exc:
        raise UsageError(
            f"a continuation event needs a sessionId: {exc.errors()[0]['msg']}"
        ) from exc
