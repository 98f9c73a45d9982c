"""Recorded history for the rules-replay tests, and what a rules change must report on it.

Two ways to fill a store: ``drive_turns`` runs real turns (the durable engine, a
scripted model, approvals and a question resolved through ``Turns``), and
``write_calls`` writes many recorded calls quickly through the store's public API,
as the journal writes them (a claim, then a commit whose log chunk holds the
assistant's tool calls and one ``actauth:decision`` per gated call). The decisions
written are actauth's under ``OLD_RULES``; ``expected_changes`` decides every call
with actauth again, under the new file, so the expected set never comes from
signoff's own gate.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import actauth

from signoff.gate import Scope
from signoff.messages import AssistantMessage, ToolCall, UserMessage
from signoff.queue.memory import MemoryQueue
from signoff.store.session_records import Commit, LogChunk, SessionRecord
from signoff.tools import tool
from tests.support.actauth_reference import actauth_decides
from tests.support.actors import person
from tests.support.agents import answer, calls, make_agent, playing
from tests.support.durable import StaticAgents, turns_over

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.agents import Agent
    from signoff.clock import ManualClock

AGENT = "refunds"

OLD_RULES = """\
default_decision: deny
rules:
  - {name: lookups, scope: "*/*/*", tool: lookup_order, decision: allow}
  - name: small-refunds
    scope: "*/*/*"
    tool: issue_refund
    decision: allow
    when: {field: amount, op: lte, value: 50}
  - {name: refunds, scope: "*/*/*", tool: issue_refund, decision: ask}
  - {name: cancel-staging, scope: "*/staging/*", tool: cancel_order, decision: allow}
  - {name: cancel-production, scope: "*/production/*", tool: cancel_order, decision: ask}
"""

# Tighter: small refunds up to 20 only (allow → ask), huge ones refused (ask → deny).
TIGHTER_RULES = """\
default_decision: deny
rules:
  - {name: lookups, scope: "*/*/*", tool: lookup_order, decision: allow}
  - name: tiny-refunds
    scope: "*/*/*"
    tool: issue_refund
    decision: allow
    when: {field: amount, op: lte, value: 20}
  - name: huge-refunds
    scope: "*/*/*"
    tool: issue_refund
    decision: deny
    when: {field: amount, op: gt, value: 500}
  - {name: refunds, scope: "*/*/*", tool: issue_refund, decision: ask}
  - {name: cancel-staging, scope: "*/staging/*", tool: cancel_order, decision: allow}
  - {name: cancel-production, scope: "*/production/*", tool: cancel_order, decision: ask}
"""

# The same, and acme's production cancels no longer asked about (ask → allow: less guarded).
LOOSER_RULES = TIGHTER_RULES.replace(
    '  - {name: cancel-production, scope: "*/production/*"',
    '  - {name: acme-cancels, scope: "acme/production/*", tool: cancel_order, decision: allow}\n'
    '  - {name: cancel-production, scope: "*/production/*"',
)

TENANTS = ("acme", "globex", "initech")
ENVIRONMENTS = ("production", "staging")


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"refunded {amount} on {order_id}"


@tool(safe=True)
def lookup_order(order_id: str) -> str:
    """Read an order."""
    return f"{order_id}: in transit"


@tool
def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    return f"cancelled {order_id}"


@dataclass(frozen=True)
class Made:
    """A tool call the history holds: where, what, and whether the gate decided it."""

    session_id: str
    call_id: str
    tool: str
    args: dict[str, Any]
    tenant: str
    environment: str
    at: float = 0.0
    gated: bool = True


def agent() -> Agent:
    return make_agent(issue_refund, lookup_order, cancel_order, rules=OLD_RULES, name=AGENT)


def gate(rules: str, directory: Path) -> actauth.Gate:
    """actauth's gate over ``rules``, loaded from a file as actauth loads one."""
    path = directory / f"actauth-{abs(hash(rules))}.yml"
    path.write_text(rules)
    return actauth.Gate.from_config(path)


def decision(gate: actauth.Gate, made: Made) -> tuple[str, str]:
    """actauth's decision and reason for ``made`` under ``gate``."""
    scope = Scope(tenant=made.tenant, environment=made.environment, agent=AGENT)
    verdict, reason, _ = actauth_decides(gate, made.tool, made.args, scope)
    return verdict, reason


def expected_changes(
    made: list[Made], old: actauth.Gate, new: actauth.Gate, *, since: float
) -> set[tuple[str, str, str, str]]:
    """(session, call, old decision, new decision) of each gated call since ``since``
    that actauth decides differently under the new rules."""
    found = set()
    for call in made:
        if not call.gated or call.at < since:
            continue
        before, after = decision(old, call)[0], decision(new, call)[0]
        if before != after:
            found.add((call.session_id, call.call_id, before, after))
    return found


def drive_turns(store: Any, clock: ManualClock) -> list[Made]:
    """Real turns on ``store``: allowed, asked and approved, asked and denied, a question
    before a gated call, a refused tool; every call the model made, as made."""
    script = [
        calls(
            ("lookup_order", {"order_id": "A-1"}),
            ("issue_refund", {"order_id": "A-1", "amount": 30}),
        ),
        answer("refunded"),
        calls(("cancel_order", {"order_id": "A-1"})),
        answer("cancelled"),
        calls(("issue_refund", {"order_id": "B-7", "amount": 700})),
        calls(
            ("ask_user", {"question": "which order?"}),
            ("issue_refund", {"order_id": "C-2", "amount": 10}),
        ),
        answer("done"),
        calls(("cancel_order", {"order_id": "D-4"}), ("wipe_orders", {})),
        answer("over"),
    ]
    made_calls = [call for response in script for call in response.tool_calls]
    turns = turns_over(
        store, MemoryQueue(), StaticAgents({AGENT: (agent(), playing(*script))}), clock
    )
    sessions: list[tuple[str, str, str]] = []  # per call: session, tenant, environment

    def send(message: str, tenant: str, environment: str, session_id: str | None = None) -> Any:
        clock.advance(60)
        return turns.send(
            AGENT, message, tenant=tenant, environment=environment, session_id=session_id
        )

    def approve(result: Any, **how: Any) -> Any:
        clock.advance(30)
        kwargs = how or {"decision": "approve"}
        return turns.resolve(result.pending.id, actor=person("alice", "api"), **kwargs)

    first = send("refund A-1", "acme", "production")
    sessions += [(first.session_id, "acme", "production")] * 2
    asked = send("cancel A-1", "acme", "production", session_id=first.session_id)
    approve(asked)
    sessions.append((first.session_id, "acme", "production"))
    big = send("refund B-7", "globex", "staging")
    approve(big, decision="deny")
    sessions.append((big.session_id, "globex", "staging"))
    question = send("refund something", "acme", "production")
    approve(question, answer="C-2")
    sessions += [(question.session_id, "acme", "production")] * 2
    cancel = send("cancel D-4 and wipe", "acme", "production")
    approve(cancel)
    sessions += [(cancel.session_id, "acme", "production")] * 2
    return [
        Made(
            session_id=session_id,
            call_id=call.id,
            tool=call.name,
            args=dict(call.args),
            tenant=tenant,
            environment=environment,
            at=clock.now().timestamp(),
            gated=call.name != "ask_user",
        )
        for call, (session_id, tenant, environment) in zip(made_calls, sessions, strict=True)
    ]


def random_calls(count: int, *, start: float, end: float, seed: int = 17) -> list[Made]:
    """``count`` calls in sessions of 1 to 8 calls, at times spread from ``start`` to
    ``end``; about one in ten is the model's ``ask_user``, which the rules do not gate."""
    rng = random.Random(seed)
    made: list[Made] = []
    number = 0
    while len(made) < count:
        session_id = f"s{number:05d}"
        tenant, environment = rng.choice(TENANTS), rng.choice(ENVIRONMENTS)
        at = rng.uniform(start, end)
        for _ in range(min(rng.randint(1, 8), count - len(made))):
            name = rng.choice(["issue_refund", "issue_refund", "lookup_order", "cancel_order"])
            args: dict[str, Any] = {"order_id": f"O-{rng.randint(1, 9999)}"}
            if name == "issue_refund":
                args["amount"] = rng.choice([5, 20, 21, 50, 51, 499, 500, 501, rng.uniform(1, 900)])
            gated = rng.random() > 0.1
            made.append(
                Made(
                    session_id=session_id,
                    call_id=f"call-{len(made):05d}",
                    tool=name if gated else "ask_user",
                    args=args if gated else {"question": "which order?"},
                    tenant=tenant,
                    environment=environment,
                    at=at,
                    gated=gated,
                )
            )
        number += 1
    return made


def write_calls(store: Any, made: list[Made], old: actauth.Gate) -> None:
    """Record ``made`` as the journal does: per session one step, its chunk holding the
    assistant's calls and actauth's decision of each gated call, in call order."""
    by_session: dict[str, list[Made]] = {}
    for call in made:
        by_session.setdefault(call.session_id, []).append(call)
    for session_id, its in by_session.items():
        first = its[0]
        session = SessionRecord(
            session_id=session_id,
            agent=AGENT,
            tenant=first.tenant,
            environment=first.environment,
        )
        owner = f"writer-{session_id}"
        store.sessions.claim(
            session, purpose="message", owner=owner, until=first.at + 60, now=first.at
        )
        events = []
        for call in its:
            if call.gated:
                verdict, reason = decision(old, call)
                events.append(
                    {
                        "type": "actauth:decision",
                        "tool": call.tool,
                        "decision": verdict,
                        "reason": reason,
                    }
                )
        chunk = LogChunk(
            session_id=session_id,
            seq=0,
            run_id=f"run-{session_id}",
            messages=[
                UserMessage(content="go"),
                AssistantMessage(
                    tool_calls=tuple(
                        ToolCall(id=call.call_id, name=call.tool, args=call.args) for call in its
                    )
                ),
            ],
            events=events,
            at=first.at,
        )
        done = session.model_copy(update={"status": "done", "next_seq": 1, "updated_at": first.at})
        store.sessions.commit(Commit(session=done, chunk=chunk, release=True), owner=owner)
