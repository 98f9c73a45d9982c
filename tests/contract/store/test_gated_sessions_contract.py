"""Contract of ``GatedSessions.gated``: an agent's sessions with a rule decision on given days.

A commit whose log chunk holds an ``actauth:decision`` lists its session under the
agent's UTC day, in the same write; ``gated`` reads the days of a window by key
(no scan, no index), one tenant's or all, each session once, and forgets a session
whose retention has passed. What ``signoff rules replay`` reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.store.session_records import Commit, LogChunk

if TYPE_CHECKING:
    from signoff.clock import ManualClock
    from tests.contract.conftest import Records, Store

DAY = 86400.0
DECISION = {"type": "actauth:decision", "tool": "refund", "decision": "ask", "reason": "x"}


def step(
    store: Store, records: Records, session_id: str, at: float, *, gated: bool = True, **s: Any
) -> None:
    """One committed step of ``session_id`` at ``at``: its chunk holds a decision if ``gated``."""
    session = records.session(session_id, **s)
    owner = f"owner-{session_id}"
    current = store.sessions.load(session_id)
    seq = current.next_seq if current else 0
    store.sessions.claim(session, purpose="message", owner=owner, until=at + 60, now=at)
    events = [DECISION] if gated else [{"type": "assistant:text", "text": "hi"}]
    chunk = LogChunk(session_id=session_id, seq=seq, run_id="r", events=events, at=at)
    done = (current or session).model_copy(
        update={
            "status": "done",
            "next_seq": seq + 1,
            "expires_at": s.get("expires_at"),
            "updated_at": at,  # as the journal stamps each commit
        }
    )
    store.sessions.commit(Commit(session=done, chunk=chunk, release=True), owner=owner)


def listed(store: Store, since: float, until: float, **kw: Any) -> list[str]:
    return [s.session_id for s in store.sessions.gated("refunds", since=since, until=until, **kw)]


def test_a_session_with_a_rule_decision_is_listed_under_its_agent_and_day(
    store: Store, records: Records, t0: float
) -> None:
    step(store, records, "s1", t0 + 10)
    step(store, records, "quiet", t0 + 20, gated=False)
    step(store, records, "other", t0 + 30, agent="billing")
    assert listed(store, t0, t0 + 60) == ["s1"]
    assert [s.session_id for s in store.sessions.gated("billing", since=t0, until=t0)] == ["other"]


def test_only_the_days_of_the_window_are_read_and_each_session_once(
    store: Store, records: Records, t0: float
) -> None:
    step(store, records, "early", t0 - 3 * DAY)
    step(store, records, "s1", t0 + 1)
    step(store, records, "s1", t0 + DAY + 1)  # the same session, a day later
    step(store, records, "s2", t0 + 2 * DAY)
    step(store, records, "late", t0 + 9 * DAY)
    assert listed(store, t0, t0 + 2 * DAY) == ["s1", "s2"]
    # whole days: a window starting late on a day still reads that day
    assert listed(store, t0 + DAY + 600, t0 + 2 * DAY) == ["s1", "s2"]
    assert listed(store, t0 - 3 * DAY, t0 - 3 * DAY) == ["early"]


def test_a_tenant_reads_only_its_own_sessions(store: Store, records: Records, t0: float) -> None:
    step(store, records, "a1", t0, tenant="acme")
    step(store, records, "b1", t0, tenant="acme-eu")
    step(store, records, "a2", t0, tenant="acme")
    assert listed(store, t0, t0, tenant="acme") == ["a1", "a2"]
    assert listed(store, t0, t0, tenant="acme-eu") == ["b1"]
    assert listed(store, t0, t0) == ["a1", "a2", "b1"]


def test_more_sessions_than_a_page_are_all_listed(
    store: Store, records: Records, t0: float
) -> None:
    names = [f"s{n:02d}" for n in range(8)]  # the contract store pages by 3
    for n, name in enumerate(names):
        step(store, records, name, t0 + n)
    assert listed(store, t0, t0) == names


def test_a_session_past_its_retention_is_not_listed(
    store: Store, records: Records, t0: float, clock: ManualClock
) -> None:
    step(store, records, "kept", t0, expires_at=t0 + 30 * DAY)
    step(store, records, "gone", t0, expires_at=t0 + DAY)
    clock.advance(2 * DAY)
    assert listed(store, t0, t0 + 2 * DAY) == ["kept"]
