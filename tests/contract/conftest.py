"""Fixtures of the contract suites: each store port against every adapter.

``store`` is parametrized over the in-memory adapter and the DynamoDB adapter on
moto (tables, bucket and environment built from ``template.yaml``); both run with
a small page size so paging is exercised, and with a manual clock for TTL.
Test modules reach these through fixtures only (``t0``, ``clock``, ``store``,
``records``); the names below are imported by them under ``TYPE_CHECKING`` at most.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from signoff.clock import ManualClock
from signoff.ids import new_id
from signoff.messages import UserMessage
from signoff.store.dynamodb import DynamoStore
from signoff.store.memory import MemoryStore
from signoff.store.pending_records import OutboxRow, PendingItem, PendingStatus, Ruling
from signoff.store.records import AuditEntry
from signoff.store.session_records import Commit, LogChunk, SessionRecord
from tests.support.aws import aws as aws
from tests.support.builders import T0 as T0
from tests.support.builders import pending_approval

START = datetime.fromtimestamp(T0, UTC)  # the builders' "now": 2026-01-01
PAGE_SIZE = 3
# The lease a pause commit is written under (Records.pause).
PAUSER = "lambda-pauser"

Store = MemoryStore | DynamoStore


@pytest.fixture
def t0() -> float:
    """The clock's start, in epoch seconds: the "now" of every contract test."""
    return T0


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture(params=["memory", "dynamodb"])
def store(request: pytest.FixtureRequest, clock: ManualClock) -> Store:
    if request.param == "memory":
        return MemoryStore(clock=clock, page_size=PAGE_SIZE)
    request.getfixturevalue("aws")
    # from_env: the names come from the template's environment, as in Lambda
    return DynamoStore.from_env(clock=clock, page_size=PAGE_SIZE)


class Records:
    """Builders of store records with plain defaults, and the writes that create them."""

    def session(self, session_id: str = "s1", **changes: Any) -> SessionRecord:
        base = SessionRecord(
            session_id=session_id, agent="refunds", tenant="acme", environment="production"
        )
        return base.model_copy(update=changes)

    def chunk(self, seq: int, *, session_id: str = "s1", **changes: Any) -> LogChunk:
        base = LogChunk(
            session_id=session_id,
            seq=seq,
            run_id="run-1",
            messages=[UserMessage(content=f"message {seq}")],
            events=[{"type": "session", "seq": seq}],
            at=T0 + seq,
        )
        return base.model_copy(update=changes)

    def pending(
        self, pending_id: str = "p1", *, session_id: str = "s1", **changes: Any
    ) -> PendingItem:
        return pending_approval(
            pending_id, session_id=session_id, channels=["slack", "email"], **changes
        )

    def outbox(self, pending_id: str, channel: str, **changes: Any) -> OutboxRow:
        base = OutboxRow(
            pending_id=pending_id, channel=channel, run_id="run-1", kind="approval", created_at=T0
        )
        return base.model_copy(update=changes)

    def audit(self, entry_id: str, *, subject: str = "s1", **changes: Any) -> AuditEntry:
        base = AuditEntry(
            id=entry_id, subject=subject, at=T0, kind="rule", decision="ask", actor="actauth"
        )
        return base.model_copy(update=changes)

    def pause(
        self,
        store: Store,
        pending: PendingItem,
        *,
        outbox: list[OutboxRow] | None = None,
        chunk: LogChunk | None = None,
    ) -> None:
        """Write ``pending`` the only way it is written: a turn's pause commit (with
        ``chunk``, the step's log)."""
        session = self.session(pending.session_id)
        store.sessions.claim(session, purpose="message", owner=PAUSER, until=T0 + 60, now=T0)
        paused = session.model_copy(update={"status": "paused", "pending_id": pending.id})
        commit = Commit(
            session=paused, pending=pending, outbox=outbox or [], chunk=chunk, release=True
        )
        store.sessions.commit(commit, owner=PAUSER)

    def resolve(
        self,
        store: Store,
        pending_id: str,
        *,
        status: PendingStatus,
        actor: str,
        channel: str,
        now: float,
        session_id: str = "s1",
        **changes: Any,
    ) -> PendingItem:
        """Resolve through the port, with the audit entry every decision carries."""
        entry = self.decision_entry(
            pending_id, status=status, actor=actor, channel=channel, now=now, subject=session_id
        )
        ruling = Ruling(status=status, actor=actor, channel=channel, now=now, **changes)
        return store.pending.resolve(pending_id, ruling, audit=entry)

    def decision_entry(
        self, pending_id: str, *, status: str, actor: str, channel: str, now: float, subject: str
    ) -> AuditEntry:
        """The audit entry of one decision (a fresh id each time, as ``Decisions`` makes)."""
        return self.audit(
            new_id(),
            subject=subject,
            at=now,
            kind="expiry" if status == "expired" else "human",
            decision=status,
            actor=actor,
            channel=channel,
            pending_id=pending_id,
        )


@pytest.fixture
def records() -> Records:
    return Records()
