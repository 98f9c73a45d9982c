"""The session and pending-item ports, split by who calls them: each small, each
caller typed by its own.

``Sessions`` and ``PendingItems`` are their narrow ports at once (what
``TableSessions`` and ``TablePendingItems`` implement); a method added to the whole
but to no narrow port, or a caller that takes the whole port again, fails here.
That each adapter matches each port, method by method, is the contract suites'
(``tests/contract/store/test_sessions_contract.py``, ``test_pending_contract.py``); mypy
checks the wiring.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import TYPE_CHECKING

import pytest

from signoff.api.context import Api
from signoff.api.waiting import wait_for_chunk
from signoff.approvals.inbox import pending_rows
from signoff.durable.decide import Decisions
from signoff.durable.escalation import Escalator
from signoff.durable.journal import Journal
from signoff.durable.slots import defer
from signoff.durable.sweeper import Sweeper, session_of
from signoff.durable.turns import Turns
from signoff.durable.votes import cast
from signoff.notify.hub import Notifier
from signoff.store.base import (
    GatedSessions,
    InboxPending,
    OperatorPending,
    PendingDecisions,
    PendingItems,
    PendingReader,
    ResumedPending,
    SessionLog,
    Sessions,
    StalledSessions,
    SweptPending,
    TurnPending,
    TurnSessions,
    WatchedSessions,
)
from signoff.store.pending import TablePendingItems
from signoff.store.pending_records import Ruling
from signoff.store.sessions import TableSessions
from tests.unit.notify.test_outbox_ports import methods

if TYPE_CHECKING:
    from collections.abc import Callable

SESSION_PORTS: tuple[type, ...] = (
    SessionLog,
    TurnSessions,
    WatchedSessions,
    GatedSessions,
    StalledSessions,
)
PENDING_PORTS: tuple[type, ...] = (
    PendingReader,
    PendingDecisions,
    ResumedPending,
    TurnPending,
    SweptPending,
    InboxPending,
    OperatorPending,
)
NARROW = SESSION_PORTS + PENDING_PORTS


@pytest.mark.parametrize("port", NARROW, ids=[port.__name__ for port in NARROW])
def test_each_narrow_port_has_one_to_six_methods(port: type) -> None:
    assert 1 <= len(methods(port)) <= 6, sorted(methods(port))


@pytest.mark.parametrize(
    ("whole", "narrow", "adapter", "count"),
    [
        (Sessions, SESSION_PORTS, TableSessions, 8),
        (PendingItems, PENDING_PORTS, TablePendingItems, 10),
    ],
    ids=["sessions", "pending items"],
)
def test_the_whole_port_is_its_narrow_ports_together_and_nothing_more(
    whole: type, narrow: tuple[type, ...], adapter: type, count: int
) -> None:
    assert set().union(*(methods(port) for port in narrow)) == methods(whole)
    assert len(methods(whole)) == count
    assert methods(whole) <= {name for name in dir(adapter) if not name.startswith("_")}


def test_a_resolution_is_one_value() -> None:
    parameters = inspect.signature(PendingDecisions.resolve).parameters
    assert list(parameters) == ["self", "pending_id", "ruling", "audit"]
    assert parameters["ruling"].annotation == Ruling.__name__
    fields = [field.name for field in dataclasses.fields(Ruling)]
    assert fields[:4] == ["status", "actor", "channel", "now"]


@pytest.mark.parametrize(
    ("caller", "parameter", "port"),
    [
        (Turns.__init__, "sessions", TurnSessions),
        (Turns.__init__, "pending", TurnPending),
        (Journal.__init__, "sessions", TurnSessions),
        (defer, "sessions", TurnSessions),
        (Decisions.__init__, "pending", PendingDecisions),
        (cast, "pending", PendingDecisions),
        (Sweeper.__init__, "sessions", StalledSessions),
        (Sweeper.__init__, "pending", SweptPending),
        (Escalator.__init__, "pending", SweptPending),
        (session_of, "pending", PendingReader),
        (Notifier.__init__, "pending", PendingReader),
        (pending_rows, "items", InboxPending),
        (wait_for_chunk, "sessions", SessionLog),
    ],
    ids=[
        "turn sessions",
        "turn pending",
        "journal",
        "deferred run",
        "decision path",
        "votes",
        "sweeper sessions",
        "sweeper pending",
        "escalation ladder",
        "re-enqueue",
        "notifier",
        "inbox",
        "long poll",
    ],
)
def test_each_caller_takes_its_own_port(
    caller: Callable[..., object], parameter: str, port: type
) -> None:
    # ``from __future__ import annotations``: the annotation is the port's name
    assert inspect.signature(caller).parameters[parameter].annotation == port.__name__


def test_the_api_keeps_the_ports_it_reads() -> None:
    assert Api.__annotations__["sessions"] == WatchedSessions.__name__
    assert Api.__annotations__["pending"] == InboxPending.__name__


def test_a_rules_replay_reads_gated_sessions_and_items() -> None:
    from signoff.approvals import replay

    parameters = inspect.signature(replay.replay_rules).parameters
    assert parameters["sessions"].annotation == GatedSessions.__name__
    assert parameters["pending"].annotation == PendingReader.__name__
