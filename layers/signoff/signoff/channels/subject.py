"""The subject of a notification: which logical notification an outbox row belongs to.

Every outbox row is keyed by its subject and channel, and a send's idempotency
key is ``<runId>:<subject>:<channel>``. The store keeps the subject as text, in
the row's ``pending_id`` attribute (its name from when every subject was a
pending item); the notify queue's message carries it as ``pendingId``
(``signoff.notify.message``). ``Subject`` is that text parsed: ``Subject.parse``
is its one parser, ``str(subject)`` its one formatter, and
``str(Subject.parse(text)) == text`` for every subject written.

==========================================  ==========  =====================================
text                                        kind        what
==========================================  ==========  =====================================
``<pendingId>``                             ``item``    an approval or a question, composed
                                                        from its pending item when sent
``run:<runId>:run_start``                   run_start   a message starts a run
``run:<runId>:run_start:<pendingId>``       run_start   a resolution resumes it
``run:<runId>:run_finish``                  run_finish  done, max_turns, denied
``stuck:<pendingId>:<n>``                   stuck       the n-th reminder about an item
``stalled:<sessionId>:<runId>``             stalled     the run's lease ran out
``escalate:<pendingId>:<n>``                escalate    step n of an item's escalation
                                                        ladder, composed from the item
``votes:<pendingId>:<n>``                   votes       the n-th vote short of the quorum:
                                                        a redraw of the item's messages
==========================================  ==========  =====================================

It lives among the channels, not beside the outbox or the notifier, because
``signoff.channels.notification.notification_key`` reads it back out of a
channel's idempotency key; the store and the notifier sit above the channels
and import it from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Self

from pydantic_core import core_schema

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler

__all__ = ["Subject", "SubjectKind"]

SubjectKind = Literal["item", "run_start", "run_finish", "stuck", "stalled", "escalate", "votes"]

# The kinds whose text is ``<prefix>:<pendingId>:<n>``.
_NUMBERED: Final[tuple[SubjectKind, ...]] = ("stuck", "escalate", "votes")
_RUN: Final = "run:"
_STALLED: Final = "stalled:"
# What an item's id never starts with: the text would read as another kind.
_PREFIXES: Final = (_RUN, _STALLED, *(f"{kind}:" for kind in _NUMBERED))
_START: Final = ":run_start"
_FINISH: Final = ":run_finish"


@dataclass(frozen=True, kw_only=True)
class Subject:
    """One subject, by kind; the fields its kind names are set, the others None.

    Build one with the constructor of its kind (``Subject.item(id)``,
    ``Subject.stuck(id, n)``, …) or read one with ``Subject.parse``.
    A pydantic field typed ``Subject`` takes the text and dumps it back.
    """

    kind: SubjectKind
    # The pending item it is about: item, stuck, escalate, votes; the item whose
    # resolution resumed the run, for a run_start.
    pending_id: str | None = None
    # The run it is about: run_start, run_finish, stalled.
    run_id: str | None = None
    # The session whose run stalled: stalled.
    session_id: str | None = None
    # Which reminder, step or vote, from 1: stuck, escalate, votes.
    number: int | None = None

    def __post_init__(self) -> None:
        numbered = self.kind in _NUMBERED
        wants = {
            "pending_id": self.kind == "item" or numbered,
            "run_id": self.kind in ("run_start", "run_finish", "stalled"),
            "session_id": self.kind == "stalled",
            "number": numbered,
        }
        for name, wanted in wants.items():
            value = getattr(self, name)
            if wanted and value in (None, ""):
                raise ValueError(f"a subject of kind {self.kind} needs its {name}")
            allowed = wanted or (name == "pending_id" and self.kind == "run_start")
            if value is not None and not allowed:
                raise ValueError(f"a subject of kind {self.kind} has no {name}")
        if self.number is not None and self.number < 0:
            raise ValueError(f"a subject's number is not negative: {self.number}")
        if self.kind == "item" and str(self.pending_id).startswith(_PREFIXES):
            raise ValueError(f"an item's id that reads as another subject: {self.pending_id!r}")

    # -- one constructor per kind -------------------------------------------------------

    @classmethod
    def item(cls, pending_id: str) -> Self:
        """A pending item's own approval or question."""
        return cls(kind="item", pending_id=pending_id)

    @classmethod
    def run_start(cls, run_id: str, pending_id: str | None = None) -> Self:
        """A run's start; a resume is told apart by the item it resolved."""
        return cls(kind="run_start", run_id=run_id, pending_id=pending_id)

    @classmethod
    def run_finish(cls, run_id: str) -> Self:
        """A run's one genuine finish."""
        return cls(kind="run_finish", run_id=run_id)

    @classmethod
    def stuck(cls, pending_id: str, number: int) -> Self:
        """The ``number``-th reminder about a pending item."""
        return cls(kind="stuck", pending_id=pending_id, number=number)

    @classmethod
    def stalled(cls, session_id: str, run_id: str) -> Self:
        """A run found stalled: once per run, however often it is re-driven."""
        return cls(kind="stalled", session_id=session_id, run_id=run_id)

    @classmethod
    def escalate(cls, pending_id: str, number: int) -> Self:
        """Escalation step ``number`` (from 1) of a pending item."""
        return cls(kind="escalate", pending_id=pending_id, number=number)

    @classmethod
    def votes(cls, pending_id: str, count: int) -> Self:
        """The ``count``-th vote on a pending item: a redraw of its messages."""
        return cls(kind="votes", pending_id=pending_id, number=count)

    # -- the text -------------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Self:
        """The subject ``text`` spells (the table in the module's docstring).

        Raises:
            ValueError: ``text`` is empty, or starts as a subject of some kind and is
                not one (``stuck:p1`` without its number).
        """
        if text.startswith(_RUN):
            rest = text.removeprefix(_RUN)
            if rest.endswith(_FINISH) and _START not in rest:
                return cls.run_finish(rest.removesuffix(_FINISH))
            run_id, start, resumed = rest.partition(_START)
            if start and (not resumed or resumed.startswith(":")):
                return cls.run_start(run_id, resumed.removeprefix(":") or None)
            raise ValueError(f"not a run's subject: {text[:80]!r}")
        for kind in _NUMBERED:
            if text.startswith(f"{kind}:"):
                pending_id, _, number = text.removeprefix(f"{kind}:").rpartition(":")
                if not (number.isascii() and number.isdigit()):
                    raise ValueError(f"a subject of kind {kind} without its number: {text[:80]!r}")
                return cls(kind=kind, pending_id=pending_id, number=int(number))
        if text.startswith(_STALLED):
            session_id, _, run_id = text.removeprefix(_STALLED).rpartition(":")
            return cls.stalled(session_id, run_id)
        return cls.item(text)

    def __str__(self) -> str:
        """The subject's text, as the outbox keys it and the queue message carries it."""
        match self.kind:
            case "item":
                return f"{self.pending_id}"
            case "run_start" if self.pending_id is not None:
                return f"{_RUN}{self.run_id}{_START}:{self.pending_id}"
            case "run_start":
                return f"{_RUN}{self.run_id}{_START}"
            case "run_finish":
                return f"{_RUN}{self.run_id}{_FINISH}"
            case "stalled":
                return f"{_STALLED}{self.session_id}:{self.run_id}"
            case _:
                return f"{self.kind}:{self.pending_id}:{self.number}"

    @property
    def composed_from(self) -> str | None:
        """The pending item whose notification the subject's rows are composed from when
        sent (its own rows, an escalation step's, a vote's redraw); None for the
        subjects whose rows carry their whole notification."""
        return self.pending_id if self.kind in ("item", "escalate", "votes") else None

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """As a pydantic field: the text in (or a ``Subject``), the text out."""

        def validate(value: object) -> Subject:
            if isinstance(value, Subject):
                return value
            if isinstance(value, str):
                return cls.parse(value)
            raise ValueError("a subject is a string")

        return core_schema.no_info_plain_validator_function(
            validate, serialization=core_schema.to_string_ser_schema(when_used="always")
        )
