"""The notify queue's message: which subject to deliver, ``{"pendingId", "sessionId"}``.

Whoever commits outbox rows (a turn's commit, the sweeper, the escalation
ladder, ``signoff outbox retry``) enqueues one message per subject after the
write; the notifier function parses each record's body and delivers its
subject. ``NotifyMessage.wire`` is the one dumper and ``NotifyMessage.parse``
the one parser: nothing else reads or writes the body's keys.

It lives here, beside the notifier that is its one reader, and not in
``signoff.queue``: the queue port carries any JSON body (the sweep queue's
``SweepTask`` too, which lives beside the sweeper that runs it), and every
writer already imports ``signoff.notify`` for its rows.

The keys are the ones queued messages have always had (messages in flight
across a deployment are read by the new code): ``pendingId`` is the subject's
text (``signoff.channels.subject``), ``sessionId`` the session the subject
belongs to (empty for a stored notification that names none).
"""

from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict, Field

from signoff.channels.subject import Subject

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["NotifyMessage"]


class NotifyMessage(BaseModel):
    """One subject to deliver, as the notify queue carries it."""

    # Keys it does not know are ignored, as pydantic does by default.
    model_config = ConfigDict(defer_build=True, frozen=True, populate_by_name=True)

    subject: Subject = Field(alias="pendingId")
    session_id: str = Field(alias="sessionId")

    @classmethod
    def of(cls, subject: Subject, session_id: str) -> Self:
        """The message that asks the notifier to deliver ``subject``."""
        return cls(subject=subject, session_id=session_id)

    @classmethod
    def parse(cls, body: "str | bytes | Mapping[str, Any]") -> Self:
        """The message a body holds: an SQS record's text, or its JSON read already
        (what ``MemoryQueue.receive`` hands back).

        Raises:
            pydantic.ValidationError: the body is no such message (not JSON, a key
                missing, a subject that does not parse).
        """
        if isinstance(body, str | bytes):
            return cls.model_validate_json(body)
        return cls.model_validate(body)

    def wire(self) -> dict[str, Any]:
        """The body to enqueue: ``{"pendingId": <subject>, "sessionId": <session>}``."""
        return self.model_dump(mode="json", by_alias=True)
