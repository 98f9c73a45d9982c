"""Approval policies: how many people an ask needs, and how it escalates while it waits.

A rule that asks may say more than ``ask``::

    - name: big-refunds
      scope: "*/production/*"
      tool: issue_refund
      decision: ask
      approvals: 2                 # two different people approve (N of M)
      from: [alice, bob, carol]    # only these may vote (people or groups); absent: anyone
      denyQuorum: 1                # denies that stop it (default 1: the first deny decides)
      escalate:                    # overrides the agent's ladder for this rule
        - {after: 30m, notify: slack-leads}
        - {after: 2h, notify: [email-oncall]}
        - {after: 8h, then: deny}  # ``approve`` only in a rule's own ladder

actauth ignores keys it does not know, so such a file still decides the same
``ask`` there. The policy of an item is fixed when its turn pauses
(``ApprovalPolicy`` on the pending item), so a rules change never alters the
quorum of an item already waiting.
"""

import re
from itertools import pairwise
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "ApprovalPolicy",
    "Ballot",
    "Duration",
    "EscalationStep",
    "Names",
    "check_ladder",
    "fixed",
    "policy_of",
    "seconds",
]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds(value: Any) -> Any:
    """``"24h"``, ``"30m"``, ``"90s"``, ``"2d"`` or a number of seconds → seconds."""
    if isinstance(value, str):
        found = _DURATION.match(value)
        if not found:
            raise ValueError("a duration like '90s', '30m', '24h', '2d' or a number of seconds")
        return float(found.group(1)) * _UNIT[found.group(2)]
    return value


Duration = Annotated[float, BeforeValidator(seconds), Field(gt=0)]


def _names(value: Any) -> Any:
    """``notify: slack-leads`` or ``from: finance`` → a one-name list."""
    return [value] if isinstance(value, str) else value


Names = Annotated[tuple[str, ...], BeforeValidator(_names)]


class _Policy(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid", populate_by_name=True)


class EscalationStep(_Policy):
    """One rung: after ``after`` seconds of waiting, notify ``notify``, or end it (``then``)."""

    after: Duration
    notify: Names = ()
    then: Literal["deny", "approve"] | None = None

    @model_validator(mode="after")
    def _does_something(self) -> "EscalationStep":
        if not self.notify and self.then is None:
            raise ValueError("an escalation step notifies channels (notify) or ends it (then)")
        return self


def check_ladder(steps: tuple[EscalationStep, ...], *, may_approve: bool) -> None:
    """Refuse a ladder whose steps are out of order, or that ends anywhere but last.

    ``may_approve``: only a rule's own ladder may end in ``then: approve`` (the rule
    says so explicitly for its calls); an agent's ladder covers every ask, so it may
    only deny.

    Raises:
        ValueError: the ladder's problem, naming the step (from 1).
    """
    for number, (before, step) in enumerate(pairwise(steps), start=2):
        if step.after <= before.after:
            raise ValueError(f"escalation step {number} must come later than step {number - 1}")
    for number, step in enumerate(steps[:-1], start=1):
        if step.then is not None:
            raise ValueError(f"escalation step {number}: only the last step may have 'then'")
    if steps and steps[-1].then == "approve" and not may_approve:
        raise ValueError(
            "an agent's escalation may end in 'then: deny' only; "
            "'then: approve' belongs to a rule that allows it for its own calls"
        )


class ApprovalPolicy(_Policy):
    """What an item needs before its turn continues, fixed when the turn paused.

    ``approvals`` different people approve (a person counts once whatever channel
    they use); ``approvers`` (the rule's ``from``, people or groups) limits who may
    vote, empty meaning whoever the channel lets decide; ``deny_quorum`` denies stop
    it. ``escalate`` is the ladder the sweeper climbs while it waits; ``rule`` names
    the rule it came from (None: the agent's ladder, or a rule without a name).
    """

    approvals: int = Field(default=1, ge=1)
    approvers: tuple[str, ...] = ()
    deny_quorum: int = Field(default=1, ge=1)
    escalate: tuple[EscalationStep, ...] = ()
    rule: str | None = None

    @property
    def plain(self) -> bool:
        """Whether it asks only for one decision, by anyone (what an item without one
        does): every field but the rule's name at its default."""
        return all(
            getattr(self, name) == field.default
            for name, field in type(self).model_fields.items()
            if name != "rule"
        )

    @property
    def counts_votes(self) -> bool:
        """Whether a decision is a vote: more than one approval, or deny, decides it."""
        return self.approvals > 1 or self.deny_quorum > 1

    def outcome(self, votes: "Sequence[Ballot]") -> Literal["approved", "denied"] | None:
        """What ``votes`` (one per person) decide, or None while they decide nothing."""
        approvals = sum(vote.decision == "approve" for vote in votes)
        if len(votes) - approvals >= self.deny_quorum:
            return "denied"
        return "approved" if approvals >= self.approvals else None

    def tally(self, votes: "Sequence[Ballot]") -> str:
        """``1 of 2 approvals — alice`` (and the denies so far, when there are any)."""
        approvers = [vote.person for vote in votes if vote.decision == "approve"]
        deniers = [vote.person for vote in votes if vote.decision != "approve"]
        line = f"{len(approvers)} of {self.approvals} approvals"
        if approvers:
            line += f" — {', '.join(approvers)}"
        if deniers:
            line += f"; {len(deniers)} of {self.deny_quorum} denies — {', '.join(deniers)}"
        return line


class Ballot(Protocol):
    """A vote as a policy counts it (``signoff.store.pending_records.Vote``)."""

    @property
    def person(self) -> str: ...

    @property
    def decision(self) -> str: ...


def fixed(policy: ApprovalPolicy) -> ApprovalPolicy | None:
    """``policy`` as an item keeps it: None when it is plain (one decision, no
    escalation), and such an item is stored without one."""
    return None if policy.plain else policy


def policy_of(*, agent_ladder: tuple[EscalationStep, ...] = ()) -> ApprovalPolicy | None:
    """The policy of a wait no rule's policy governs (a question, the default's ask):
    the agent's ladder alone. A rule's is ``signoff.gate.Rule.policy``."""
    return fixed(ApprovalPolicy(escalate=agent_ladder))
