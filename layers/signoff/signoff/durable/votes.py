"""Votes on an item whose policy needs more than one approval (or deny).

A person counts once, whatever channel they vote through (``signoff.gate.people``
maps a Slack user, a Lark user, an email address and an API key to one person).
Each vote is one conditional write with its audit entry (``PendingDecisions.vote``):
it holds only while the item waits and still has the votes the voter read, so
two concurrent votes never both count as the same count, and exactly one vote
reaches the quorum. That write resolves the item — approved once ``approvals``
people approved, denied once ``deny_quorum`` people denied (the first deny by
default) — and only its caller continues the turn. A vote that lost the race
reads the item again and is decided anew (a second vote of the same person is
refused, one on a resolved item sees ``AlreadyResolved``).

Changes to the arguments (``Approve.args``) need a single approver: with several,
each would approve something else, so they are refused on such an item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

from signoff.errors import AlreadyVoted, NotFound, StoreUnavailable, UsageError
from signoff.ids import new_id
from signoff.store.records import AuditEntry

if TYPE_CHECKING:
    from collections.abc import Sequence

    from signoff.gate.policy import ApprovalPolicy
    from signoff.store.base import PendingDecisions
    from signoff.store.pending_records import PendingItem, PendingStatus, Vote

__all__ = ["cast"]

# Each failed attempt means another vote was written, so N concurrent voters need
# at most N attempts each; past this many, the caller retries later.
_ATTEMPTS: Final = 100


def cast(
    pending: PendingDecisions,
    item: PendingItem,
    vote: Vote,
    *,
    retention: float,
    changes: bool = False,
) -> PendingItem:
    """Record ``vote`` on ``item`` (re-read on each lost race); the item after it.

    Raises:
        UsageError: ``changes`` (an approval with changed arguments).
        AlreadyVoted: the person voted on it before.
        AlreadyResolved, Expired, NotFound: as ``PendingDecisions.vote``.
        StoreUnavailable: it kept losing to other votes.
    """
    policy = item.policy
    assert policy is not None and policy.counts_votes  # the caller's test
    if changes:
        raise UsageError(
            f"this request needs {policy.approvals} approvals: changes to its arguments "
            "need a single approver, so approve it as asked or deny it"
        )
    for _ in range(_ATTEMPTS):
        earlier = next((v for v in item.votes if v.person == vote.person), None)
        if item.status == "pending" and earlier is not None:
            raise AlreadyVoted(item, vote.person, resent=_same(earlier, vote))
        votes = [*item.votes, vote]
        status = policy.outcome(votes)
        written = pending.vote(
            item,
            vote,
            audit=_entry(item, vote, votes, status, policy),
            status=status,
            retain_until=None if status is None else vote.at + retention,
        )
        if written is not None:
            return written
        current = pending.get(item.id)
        if current is None:
            raise NotFound("pending item", item.id)
        item = current
    raise StoreUnavailable(f"pending item {item.id}: too many votes at once; retry")


def _same(earlier: Vote, vote: Vote) -> bool:
    """Whether ``vote`` is ``earlier`` sent again: one actor, channel and decision."""
    return (earlier.actor, earlier.channel, earlier.decision) == (
        vote.actor,
        vote.channel,
        vote.decision,
    )


def _entry(
    item: PendingItem,
    vote: Vote,
    votes: Sequence[Vote],
    status: PendingStatus | None,
    policy: ApprovalPolicy,
) -> AuditEntry:
    """The vote's entry; for the vote that decides, the decision's, naming every voter."""
    kind: Literal["human", "vote"] = "vote" if status is None else "human"
    if status is None:
        reason = policy.tally(votes)
    else:
        voters = ", ".join(f"{v.person} ({v.decision}, {v.channel})" for v in votes)
        reason = f"{policy.tally(votes)}; voters: {voters}"
    if vote.note:
        reason = f"{reason}; {vote.note}"
    return AuditEntry(
        id=new_id(),
        subject=item.session_id,
        at=vote.at,
        kind=kind,
        decision=vote.decision if status is None else status,
        actor=vote.actor,
        channel=vote.channel,
        pending_id=item.id,
        tool=item.tool,
        reason=reason,
        tenant=item.tenant,
        agent=item.agent,
    )
