"""Deciding a pending item: checked, written once together with its audit entry.

Every way an item is decided comes through ``Decisions``: an API call, a link's
form, a chat click, an inbox card, and the sweeper's moves. What a person asks for
is a small tagged value (``Approve``, ``Deny``, ``Answer``); who asks is an
``Actor`` (``signoff.approver.actors``) — the identity that verified them and the channel
it came through — and the entry point's own check says whether that actor may
decide that item (a refusal is audited with the actor and the reason, then
raised as ``Forbidden``). An approval with changes is checked
against the tool's schema only after that (``signoff.approver.edits``), and stores the
arguments the tool will run with. The state change is one conditional
write on the item that carries its audit entry in the same transaction
(``PendingDecisions.resolve``), so no crash can leave a decision without its entry.
Continuing the turn is ``Turns.decide``'s part.

An item whose policy (``signoff.gate.policy``) names who may decide (``from``)
refuses anyone else the same way; one that needs more than one approval or deny
takes a person's approve / deny as a vote (``signoff.durable.votes``), and the
vote that reaches the quorum decides it. ``decide`` takes a person's ``Actor``
only, so every decision it makes meets the policy; the sweeper's moves are
``expire`` and ``escalate``, made by a ``SystemActor`` (no request can build one),
which decide outright and give the audit entry its kind.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from signoff.approvals.escalation import escalated_to
from signoff.approver.actors import ESCALATION, EXPIRY, Actor, SystemActor
from signoff.approver.card import relative
from signoff.approver.edits import apply_changes, describe_changes
from signoff.durable.votes import cast
from signoff.errors import Forbidden, NotFound, UsageError
from signoff.ids import new_id
from signoff.store.pending_records import Ruling, Vote
from signoff.store.records import AuditEntry

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.approver.actors import Decider
    from signoff.clock import Clock
    from signoff.gate.people import People
    from signoff.store.base import Audit, OutboxRows, PendingDecisions
    from signoff.store.pending_records import PendingItem, PendingStatus
    from signoff.tools import Tool

__all__ = [
    "Answer",
    "Approve",
    "Check",
    "Decisions",
    "Deny",
    "Verdict",
    "changes_of",
    "not_sent_to",
    "verdict_of",
]


@dataclass(frozen=True, kw_only=True)
class Approve:
    """Run the tool call: as asked, or with ``args`` (the fields an approver changed)."""

    note: str | None = None
    args: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Deny:
    """Do not run it; ``note`` tells the model why."""

    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class Answer:
    """The answer to a question."""

    answer: str


Verdict = Approve | Deny | Answer

# An entry point's rule: why ``actor`` may not decide the item, or None when it may.
Check = Callable[["PendingItem", Actor], "str | None"]


def verdict_of(
    decision: Literal["approve", "deny"] | None,
    answer: str | None,
    note: str | None = None,
    args: Mapping[str, Any] | None = None,
) -> Verdict:
    """The verdict a request's ``decision`` / ``answer`` / ``args`` fields name.

    Raises:
        UsageError: both or neither of a decision and an answer, or changes with a deny.
    """
    if (decision is None) == (answer is None):
        raise UsageError("a decision is either approve / deny or an answer")
    if args is not None and decision != "approve":
        raise UsageError("changed arguments come only with an approval")
    if answer is not None:
        return Answer(answer=answer)
    return Approve(note=note, args=args) if decision == "approve" else Deny(note=note)


def changes_of(verdict: Verdict) -> Mapping[str, Any] | None:
    """The changed arguments ``verdict`` carries, or None."""
    return verdict.args if isinstance(verdict, Approve) else None


def not_sent_to(item: PendingItem, channel: str, *, agent: Agent, outbox: OutboxRows) -> str | None:
    """Why ``channel`` may not decide ``item``, or None when the item was sent there.

    A channel decides only what was sent to it: the item's agent notifies that
    channel for this kind of item, and the item has an outbox row for it (written
    with the pause, under the item's tenant). An item of another agent, another
    tenant or another channel has neither, whatever pending id a request names.

    A channel an escalation step of the item notified counts as sent to once the
    step was taken (the item's own ``escalation_step``, moved by the sweeper's
    conditional write after the step's rows were written): a channel of a step
    still to come, or of another item's ladder, was sent nothing and decides nothing.
    """
    if channel in escalated_to(item):
        return None
    # the agent sends this kind of item to the channel (today's config, not only the past)
    if item.kind not in agent.config.notify.get(channel, ()):
        return f"{channel} is not notified of this agent's {item.kind}s"
    # the item itself was sent there: its pause wrote the (item, channel) row
    if not any(row.channel == channel for row in outbox.rows(item.id)):
        return f"this request was not sent to {channel}"
    return None


class Decisions:
    """Writes decisions and refusals; one conditional write per decision, with its entry."""

    def __init__(
        self, *, pending: PendingDecisions, audit: Audit, clock: Clock, retention: float
    ) -> None:
        self.pending = pending
        self.audit = audit
        self.clock = clock
        self.retention = retention

    def item(self, pending_id: str) -> PendingItem:
        """The pending item ``pending_id``.

        Raises:
            NotFound: no such item (or its retention passed).
        """
        item = self.pending.get(pending_id)
        if item is None:
            raise NotFound("pending item", pending_id)
        return item

    def decide(
        self,
        item: PendingItem,
        verdict: Verdict,
        actor: Actor,
        check: Check | None = None,
        tool: Tool | None = None,
        people: People | None = None,
    ) -> PendingItem:
        """Apply ``verdict`` by ``actor`` to ``item``, once; the item as decided.

        ``tool`` is the item's tool as its agent declares it, for an approval with
        changes; ``people`` who ``actor`` is, for an item that counts votes by person
        or names its approvers (None: every actor is a person of its own). On an item
        that needs several votes, the item returned is still ``pending`` until the
        vote that reaches its quorum.

        Raises:
            UsageError: an answer for an approval, or approve / deny for a question;
                changes on an item that needs several approvals.
            Forbidden: ``check`` refused the actor, or the item names its approvers
                and the actor is none of them (the refusal is audited first).
            AlreadyVoted: this person voted on it before.
            NotEditable, InvalidChanges: changes the tool does not take (nothing is written).
            AlreadyResolved: somebody decided first (carries the current item).
            Expired: its time ran out (carries the item, status ``expired``).
        """
        if not isinstance(actor, Actor):
            # the sweeper decides through expire / escalate; here only a person does
            raise TypeError(f"Decisions.decide takes a person's Actor, not {actor!r}")
        status = _status(item, verdict)
        if check is not None and (reason := check(item, actor)) is not None:
            self.refuse(item, actor, reason)
            raise Forbidden(reason)
        if item.policy is not None:
            voted = self._by_policy(item, verdict, actor, people)
            if voted is not None:
                return voted
        note = None if isinstance(verdict, Answer) else verdict.note
        answer = verdict.answer if isinstance(verdict, Answer) else None
        reason, edited = note or "", None
        changes = changes_of(verdict)
        if changes is not None:
            # checked after the actor: whoever may not decide learns nothing of the schema
            original = item.args or {}
            args = apply_changes(tool, item.tool or "", original, changes)
            if args != original:
                edited = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
                changed = f"approved with changes: {describe_changes(original, args)}"
                reason = f"{changed}; {note}" if note else changed
        return self._write(
            item, status, actor, answer=answer, note=note, reason=reason, edited=edited
        )

    def _by_policy(
        self, item: PendingItem, verdict: Verdict, actor: Actor, people: People | None
    ) -> PendingItem | None:
        """Apply ``item``'s policy to a person's verdict: refuse whom its ``from`` leaves
        out, cast a vote where it needs several; None when one decision decides it."""
        policy = item.policy
        assert policy is not None
        # the person people.yaml lists for the identity that verified the actor (its
        # kind and value), never a name read off the actor's id or channel
        listed = people.person_of(actor.identity) if people is not None else None
        if policy.approvers:
            named = people.expand(policy.approvers) if people is not None else frozenset()
            # a rule's from names people: an identity nobody lists is none of them,
            # whatever its id reads as (a person's name, "link", a group's)
            if listed is None or listed not in named:
                refused = "not one of the approvers this request names"
                self.refuse(item, actor, refused)
                raise Forbidden(refused)
        # An identity nobody lists counts as itself. Were its id a listed person's
        # name too, the two would count as one: a vote refused, never one more.
        person = listed or _unlisted(actor)
        if not policy.counts_votes or isinstance(verdict, Answer):
            return None
        vote = Vote(
            person=person,
            actor=actor.id,
            channel=actor.channel,
            at=self.clock.now().timestamp(),
            decision="approve" if isinstance(verdict, Approve) else "deny",
            note=verdict.note,
        )
        edits = changes_of(verdict) is not None
        return cast(self.pending, item, vote, retention=self.retention, changes=edits)

    def expire(self, item: PendingItem) -> PendingItem:
        """Mark a due item expired (the sweeper's move), once.

        Raises:
            AlreadyResolved: somebody decided it first.
            NotFound: it is gone.
            UsageError: it is not due yet.
        """
        return self._write(item, "expired", EXPIRY, reason="no decision before expiresAt")

    def escalate(
        self, item: PendingItem, then: Literal["approve", "deny"], *, after: float
    ) -> PendingItem:
        """Take the final step of ``item``'s escalation ladder (the sweeper's move), once.

        Decides the item as nobody did within ``after`` seconds: ``then``, with the
        actor ``ESCALATION`` and an audit entry of kind ``escalation``; a deny's note
        tells the model why. A question has no approve: its ladder can only deny it.

        Raises:
            AlreadyResolved: somebody decided it first (carries the current item).
            Expired: its time ran out first.
            NotFound: it is gone.
        """
        waited = relative(after).removeprefix("in ")
        approve = then == "approve" and item.kind == "approval"
        status: PendingStatus = "approved" if approve else "denied"
        denial = f"nobody decided within {waited}; the escalation policy denies it"
        note = None if approve else denial
        reason = f"escalation policy: {status} after {waited} without a decision"
        return self._write(item, status, ESCALATION, reason=reason, note=note)

    def refuse(self, item: PendingItem, actor: Actor, reason: str) -> None:
        """Record that ``actor`` tried to decide ``item`` and was refused, and why."""
        now = self.clock.now().timestamp()
        self.audit.record([_entry(item, now, "refusal", "refused", actor, reason)])

    def _write(
        self,
        item: PendingItem,
        status: PendingStatus,
        actor: Decider,
        *,
        reason: str,
        answer: str | None = None,
        note: str | None = None,
        edited: str | None = None,
    ) -> PendingItem:
        now = self.clock.now().timestamp()
        # the entry's kind is the actor's type: the sweeper's move, or a person's decision
        kind = actor.move if isinstance(actor, SystemActor) else "human"
        ruling = Ruling(
            status=status,
            actor=actor.id,
            channel=actor.channel,
            now=now,
            answer=answer,
            note=note,
            edited_args_json=edited,
            retain_until=now + self.retention,
        )
        return self.pending.resolve(
            item.id, ruling, audit=_entry(item, now, kind, status, actor, reason)
        )


def _unlisted(actor: Actor) -> str:
    """Who an identity nobody lists counts as: its id (an address in one spelling)."""
    return actor.id.lower() if actor.identity.kind == "email" else actor.id


def _status(item: PendingItem, verdict: Verdict) -> Literal["approved", "denied", "answered"]:
    if item.kind == "question":
        if not isinstance(verdict, Answer):
            raise UsageError("a question is resolved with an answer")
        return "answered"
    if isinstance(verdict, Answer):
        raise UsageError("an approval is resolved with decision 'approve' or 'deny'")
    return "approved" if isinstance(verdict, Approve) else "denied"


def _entry(
    item: PendingItem,
    now: float,
    kind: Literal["human", "expiry", "escalation", "refusal"],
    decision: str,
    actor: Decider,
    reason: str,
) -> AuditEntry:
    return AuditEntry(
        id=new_id(),
        subject=item.session_id,
        at=now,
        kind=kind,
        decision=decision,
        actor=actor.id,
        channel=actor.channel,
        pending_id=item.id,
        tool=item.tool,
        reason=reason,
        tenant=item.tenant,
        agent=item.agent,
    )
