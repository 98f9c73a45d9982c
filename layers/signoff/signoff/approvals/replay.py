"""Replay a rules change over recorded history: which past gate decisions it would change.

Every tool call the gate decided is in its session's log: the assistant message
holds the call (id, tool, arguments) and an ``actauth:decision`` event, one per
gated call in the order of the calls, holds the decision and its reason. The
session holds the scope (tenant, environment, agent). A replay pairs each
decision with its call, decides the call again with the new rules
(``signoff.gate.decision``, the engine's own function) and compares. The old
decision is the recorded one, never the old rules run again: the history is the
truth, whatever the rules were when the call was made.

Decisions are paired with calls in order, skipping calls the rules do not govern
(``ask_user``, the skill loader): a decision is the next call of its tool. A
decision whose call is not in the log (a turn that failed before its first
commit keeps its events, not its messages) cannot be replayed and is counted as
``unmatched``.

An ``ask`` also has a quorum: how many people must approve (a rule's
``approvals``). The recorded quorum is the one fixed on the call's pending item
when its turn paused (``PendingItem.policy``); a new quorum that differs is a
change, and a lower one is less guarded. When the item is gone (its retention
passed), the recorded quorum is unknown and only the decision is compared.

The sessions read are those the store lists for the agent's days
(``GatedSessions.gated``): the commit that gates a call lists its session, so no
Scan of the table is needed to find them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from signoff.approver.card import readable_args
from signoff.approver.display import visible
from signoff.gate import Scope, decide
from signoff.messages import AssistantMessage

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from signoff.gate import Decision, GateDecision, RuleSet
    from signoff.messages import ToolCall
    from signoff.store.base import GatedSessions, PendingReader
    from signoff.store.session_records import LogChunk, SessionRecord

__all__ = [
    "GUARD",
    "Change",
    "RecordedCall",
    "Replay",
    "Transition",
    "recorded_calls",
    "replay_rules",
    "rule_of",
]

# How guarded a decision is: a change to a lower rank lets a call through more easily.
GUARD: Final[dict[str, int]] = {"allow": 0, "ask": 1, "deny": 2}
_MATCHED = re.compile(r"^matched rule '(.*)'$", re.DOTALL)


def rule_of(reason: str) -> str | None:
    """The rule a decision's reason names (its name, or its scope when it has none);
    None for the default decision."""
    found = _MATCHED.match(reason)
    return found.group(1) if found else None


@dataclass(frozen=True, kw_only=True)
class RecordedCall:
    """One gated tool call as the log recorded it, with the gate's decision then."""

    session_id: str
    at: float  # when the step that decided it was committed
    tenant: str
    environment: str
    agent: str
    call_id: str
    tool: str
    args: dict[str, Any]
    decision: Decision
    reason: str
    # An ask's quorum as its pending item recorded it (None: not an ask, or unknown)
    approvals: int | None = None

    @property
    def rule(self) -> str | None:
        return rule_of(self.reason)

    @property
    def label(self) -> str:
        """The decision, with its quorum when more than one person had to approve."""
        return _label(self.decision, self.approvals)

    @property
    def summary(self) -> str:
        """The call in one line, arguments clipped, hidden characters shown as escapes."""
        return visible(readable_args(self.tool, self.args), lines=False)


@dataclass(frozen=True, kw_only=True)
class Change:
    """A recorded call the new rules decide differently."""

    call: RecordedCall
    decision: Decision
    reason: str
    approvals: int | None = None  # the new quorum of an ask

    @property
    def rule(self) -> str | None:
        return rule_of(self.reason)

    @property
    def label(self) -> str:
        return _label(self.decision, self.approvals)

    @property
    def less_guarded(self) -> bool:
        """The new decision lets the call through more easily: deny > ask > allow, and an
        ask that needs fewer approvals than it did."""
        return _less_guarded(self.call.decision, self.decision, self.call.approvals, self.approvals)


@dataclass(frozen=True, kw_only=True)
class Transition:
    """One kind of change and how many calls it covers: (old decision, old rule) →
    (new decision, new rule); a rule of None is the default decision, a decision's
    label is ``ask(2)`` when two people had to approve."""

    old: str
    new: str
    old_rule: str | None
    new_rule: str | None
    count: int
    less_guarded: bool


@dataclass(frozen=True, kw_only=True)
class Replay:
    """What a rules change would have decided differently over an agent's history."""

    agent: str
    tenant: str | None
    since: float
    until: float
    calls: int  # recorded calls replayed
    unmatched: int  # recorded decisions whose call the log does not hold
    changes: tuple[Change, ...] = field(default=())

    @property
    def less_guarded(self) -> tuple[Change, ...]:
        """The changes that let a call through more easily: what a review should hold."""
        return tuple(change for change in self.changes if change.less_guarded)

    @property
    def transitions(self) -> tuple[Transition, ...]:
        """The changes counted by (old decision and rule → new decision and rule),
        most frequent first."""
        counted = Counter((_kind(change), change.less_guarded) for change in self.changes)
        ordered = sorted(counted.items(), key=lambda kv: (-kv[1], [str(p) for p in kv[0][0]]))
        return tuple(
            Transition(
                old=old,
                new=new,
                old_rule=old_rule,
                new_rule=new_rule,
                count=count,
                less_guarded=less,
            )
            for ((old, new, old_rule, new_rule), less), count in ordered
        )

    def examples(self, transition: Transition) -> list[Change]:
        """The changes of one transition, oldest first."""
        kind = (transition.old, transition.new, transition.old_rule, transition.new_rule)
        return [change for change in self.changes if _kind(change) == kind]

    def to_json(self, *, examples: int | None = None) -> dict[str, Any]:
        """The replay as one JSON document (docs/rules.md, "Replaying a rules change").

        ``examples``: at most that many changes per transition (None: every change).
        Arguments appear as a one-line summary, never whole.
        """
        shown: Counter[tuple[Any, ...]] = Counter()
        changes = []
        for change in self.changes:
            shown[_kind(change)] += 1
            if examples is None or shown[_kind(change)] <= examples:
                changes.append(_change_json(change))
        return {
            "agent": self.agent,
            "tenant": self.tenant,
            "since": _iso(self.since),
            "until": _iso(self.until),
            "calls": self.calls,
            "unmatched": self.unmatched,
            "changed": len(self.changes),
            "lessGuarded": len(self.less_guarded),
            "transitions": [
                {
                    "from": t.old,
                    "to": t.new,
                    "fromRule": t.old_rule,
                    "toRule": t.new_rule,
                    "count": t.count,
                    "lessGuarded": t.less_guarded,
                }
                for t in self.transitions
            ],
            "changes": changes,
        }


def replay_rules(
    sessions: GatedSessions,
    pending: PendingReader,
    agent: str,
    rules: RuleSet,
    *,
    since: float,
    until: float,
    tenant: str | None = None,
) -> Replay:
    """Decide every call the gate decided for ``agent`` from ``since`` to ``until``
    (of ``tenant`` only, if given) again with ``rules``, and list what changes.

    ``pending`` holds the items of the calls that were asked about: their quorum.
    """
    calls = 0
    unmatched = 0
    changes: list[Change] = []
    for session in _sessions(sessions, agent, since=since, until=until, tenant=tenant):
        chunks = sessions.read_log(session.session_id, from_seq=session.first_seq)
        found, missing, asked = recorded_calls(session, chunks, since=since, until=until)
        unmatched += missing
        quorums = _quorums(pending, asked)
        for recorded in found:
            call = replace(recorded, approvals=quorums.get(recorded.call_id))
            calls += 1
            scope = Scope(tenant=call.tenant, environment=call.environment, agent=call.agent)
            verdict = decide(rules, call.tool, call.args, scope)
            change = Change(
                call=call,
                decision=verdict.decision,
                reason=verdict.reason,
                approvals=_quorum(verdict),
            )
            if change.decision != call.decision or (
                call.approvals is not None and change.approvals != call.approvals
            ):
                changes.append(change)
    changes.sort(key=lambda change: (change.call.at, change.call.session_id, change.call.call_id))
    return Replay(
        agent=agent,
        tenant=tenant,
        since=since,
        until=until,
        calls=calls,
        unmatched=unmatched,
        changes=tuple(changes),
    )


def _sessions(
    sessions: GatedSessions,
    agent: str,
    *,
    since: float,
    until: float,
    tenant: str | None,
) -> Iterator[SessionRecord]:
    """The agent's sessions to read, each once: those listed by day."""
    seen: set[str] = set()
    for session in sessions.gated(agent, since=since, until=until, tenant=tenant):
        if session.session_id in seen or session.agent != agent:
            continue
        if tenant is not None and session.tenant != tenant:
            continue
        seen.add(session.session_id)
        yield session


def recorded_calls(
    session: SessionRecord, chunks: Iterable[LogChunk], *, since: float, until: float
) -> tuple[list[RecordedCall], int, list[str]]:
    """The gated calls of one session's log committed from ``since`` to ``until`` (their
    quorum not yet known), how many of its decisions in that window have no call in
    the log, and the ids of the approvals asked for in it."""
    waiting: list[ToolCall] = []  # calls made, in order, whose decision is not read yet
    found: list[RecordedCall] = []
    asked: list[str] = []
    unmatched = 0
    for chunk in chunks:
        for message in chunk.messages:
            if isinstance(message, AssistantMessage):
                waiting.extend(message.tool_calls)
        for event in chunk.events:
            if event.get("type") == "approval:pending" and since <= chunk.at <= until:
                asked.append(event["id"])
            if event.get("type") != "actauth:decision":
                continue
            call = _take(waiting, event["tool"])
            if not since <= chunk.at <= until:
                continue  # paired all the same: later decisions follow their own calls
            if call is None:
                unmatched += 1
                continue
            found.append(
                RecordedCall(
                    session_id=session.session_id,
                    at=chunk.at,
                    tenant=session.tenant,
                    environment=session.environment,
                    agent=session.agent,
                    call_id=call.id,
                    tool=call.name,
                    args=dict(call.args),
                    decision=event["decision"],
                    reason=event["reason"],
                )
            )
    return found, unmatched, asked


def _quorums(pending: PendingReader, asked: list[str]) -> dict[str, int]:
    """The recorded quorum of each asked call still in the store, by call id."""
    found = {}
    for pending_id in asked:
        item = pending.get(pending_id)
        if item is not None:
            found[item.call_id] = item.policy.approvals if item.policy is not None else 1
    return found


def _quorum(verdict: GateDecision) -> int | None:
    """How many people must approve an ``ask`` (None for allow and deny)."""
    if verdict.decision != "ask":
        return None
    return verdict.matched.approvals if verdict.matched is not None else 1


def _label(decision: str, approvals: int | None) -> str:
    return f"ask({approvals})" if decision == "ask" and (approvals or 1) > 1 else decision


def _kind(change: Change) -> tuple[str, str, str | None, str | None]:
    return (change.call.label, change.label, change.call.rule, change.rule)


def _less_guarded(old: str, new: str, old_approvals: int | None, new_approvals: int | None) -> bool:
    if GUARD[new] != GUARD[old]:
        return GUARD[new] < GUARD[old]
    # two asks: fewer people to convince is less guarded (an unknown old quorum: no claim)
    return old == "ask" and old_approvals is not None and (new_approvals or 1) < old_approvals


def _take(waiting: list[ToolCall], tool: str) -> ToolCall | None:
    """The first waiting call of ``tool``; the calls before it were not gated (system
    tools) and are dropped. None, dropping nothing, when no call of ``tool`` waits."""
    for place, call in enumerate(waiting):
        if call.name == tool:
            del waiting[: place + 1]
            return call
    return None


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _change_json(change: Change) -> dict[str, Any]:
    call = change.call
    return {
        "sessionId": call.session_id,
        "at": _iso(call.at),
        "tenant": call.tenant,
        "environment": call.environment,
        "callId": call.call_id,
        "tool": call.tool,
        "args": call.summary,
        "from": call.decision,
        "to": change.decision,
        "fromApprovals": call.approvals,
        "toApprovals": change.approvals,
        "fromRule": call.rule,
        "toRule": change.rule,
        "fromReason": call.reason,
        "toReason": change.reason,
        "lessGuarded": change.less_guarded,
    }
