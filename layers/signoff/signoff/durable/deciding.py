"""The decision side of a durable turn: decide a pending item once, then resume its turn.

Every entry point decides through ``Deciding``: a person's decision (``decide``,
``resolve``: the API, a link's form, a chat click, the inbox), and the sweeper's
moves on an item nobody decided (``expire``, ``escalate``). Each is one conditional
write carrying its audit entry (``signoff.durable.decide.Decisions``), and only its
winner resumes the turn; a vote short of its item's quorum resumes nothing and asks
the notifier to redraw the item's chat messages with the new tally. ``Turns``
(``signoff.durable.turns``) is a ``Deciding``: it supplies ``resume``, the run side.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Literal, Protocol

from signoff.channels.subject import Subject
from signoff.durable.decide import changes_of, verdict_of
from signoff.durable.results import Decided, TurnResult
from signoff.errors import SignoffError
from signoff.notify.message import NotifyMessage

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.agents import Agent
    from signoff.approver.actors import Actor
    from signoff.durable.decide import Check, Decisions, Verdict
    from signoff.queue.base import Queue
    from signoff.store.pending_records import PendingItem

__all__ = ["AgentSource", "Deciding"]

log = logging.getLogger(__name__)


class AgentSource(Protocol):
    """Where agents come from: an ``AgentCatalog``, or a fixed set in tests."""

    def get(self, name: str) -> Agent: ...


class Deciding(ABC):
    """Decides pending items once and continues their turns (``resume``)."""

    catalog: AgentSource
    decisions: Decisions
    queue: Queue

    @abstractmethod
    def resume(self, item: PendingItem, *, deadline: float | None = None) -> TurnResult:
        """Continue the turn of a resolved item."""

    def decide(
        self,
        pending_id: str,
        verdict: Verdict,
        actor: Actor,
        *,
        schedule: Callable[[str], None] | None,
        check: Check | None = None,
        deadline: float | None = None,
        resume: bool = True,
    ) -> Decided:
        """Decide a pending item once (with its audit entry) and continue its turn.

        With ``resume`` the turn runs here until ``deadline`` and, still running then,
        goes on through ``schedule``; without it (a chat click) all of it does.
        ``schedule=None`` leaves a yielded turn to the sweeper's re-drive.

        A vote short of its item's quorum (``Decisions.decide``) returns the item
        still pending, with no result: nothing is resumed nor scheduled.

        Raises:
            NotFound, UsageError, AlreadyResolved, Expired: as ``Decisions.decide``.
            AlreadyVoted: this person voted on the item before.
            Forbidden: ``check`` refused ``actor``, or the item's approvers do not
                include them (audited).
            NotEditable, InvalidChanges: changes the item's tool does not take.
        """
        item = self.decisions.item(pending_id)
        # changes are checked against the tool as the agent declares it now
        edits = changes_of(verdict) is not None and item.tool is not None
        tool = self.catalog.get(item.agent).tools.get(item.tool or "") if edits else None
        # who the actor is, for an item that counts votes by person or names its approvers
        people = self.catalog.get(item.agent).people if item.policy is not None else None
        decided = self.decisions.decide(item, verdict, actor, check, tool, people)
        if decided.status == "pending":
            # a vote short of the quorum: the turn waits for the vote that reaches it,
            # and the chat messages sent about the item show the new tally
            self._redraw(decided)
            return Decided(item=decided)
        result = self.resume(decided, deadline=deadline) if resume else None
        if schedule is not None and (result is None or result.status == "running"):
            schedule(decided.session_id)
        return Decided(item=decided, result=result)

    def expire(self, item: PendingItem, *, deadline: float | None = None) -> Decided:
        """Expire a due item (the sweeper's move) and resume its turn as denied.

        A failed resume is logged and left to a later sweep; the expiry stands.
        Raises AlreadyResolved (decided first) or NotFound (gone).
        """
        expired = self.decisions.expire(item)
        try:
            return Decided(item=expired, result=self.resume(expired, deadline=deadline))
        except SignoffError:
            log.warning("could not resume expired item %s yet", expired.id, exc_info=True)
            return Decided(item=expired)

    def escalate(
        self,
        item: PendingItem,
        then: Literal["approve", "deny"],
        *,
        after: float,
        deadline: float | None = None,
    ) -> Decided:
        """Take an escalation ladder's final ``then`` (the sweeper's move) and resume the turn.

        As ``expire``: one conditional write with its audit entry (kind ``escalation``),
        and only its winner resumes the turn, denied with a reason the model reads or
        approved (the tool runs once). A failed resume is left to a later sweep's re-drive.
        Raises AlreadyResolved or Expired (decided or expired first) or NotFound (gone).
        """
        decided = self.decisions.escalate(item, then, after=after)
        try:
            return Decided(item=decided, result=self.resume(decided, deadline=deadline))
        except SignoffError:
            log.warning("could not resume escalated item %s yet", decided.id, exc_info=True)
            return Decided(item=decided)

    def resolve(
        self,
        pending_id: str,
        *,
        decision: Literal["approve", "deny"] | None = None,
        answer: str | None = None,
        actor: Actor,
        note: str | None = None,
        deadline: float | None = None,
    ) -> TurnResult:
        """``decide`` by ``actor``, resuming the turn here (as ``decide``).

        A vote short of its item's quorum leaves the turn paused on the same item.
        """
        verdict = verdict_of(decision, answer, note)
        decided = self.decide(pending_id, verdict, actor, schedule=None, deadline=deadline)
        item = decided.item
        if decided.result is None:
            assert item.status == "pending"  # only a vote short of the quorum runs nothing
            return TurnResult(
                status="paused", session_id=item.session_id, agent=item.agent, pending=item
            )
        return decided.result

    def _redraw(self, item: PendingItem) -> None:
        """Ask the notifier to redraw the messages sent about ``item`` (its votes changed)."""
        message = NotifyMessage.of(Subject.votes(item.id, item.vote_count), item.session_id)
        try:
            self.queue.send(message.wire())
        except SignoffError:
            # the vote stands; only the chat messages show the older tally
            log.warning("could not ask for a redraw of %s", item.id, exc_info=True)
