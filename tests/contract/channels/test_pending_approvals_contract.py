"""Contract of ``PendingApprovalsRepository``: every adapter stores an item's row at most once.

Run against the memory adapter and a real PostgreSQL table (``tests.support.services``
starts the server); each adapter is read back the way its reader would read it.
Then the database channel over a repository: what it hands the repository, and
how a repository's failure reaches the notifier.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

import psycopg
import pytest

from signoff.channels.database.channel import (
    DatabaseChannel,
    PendingApprovalRow,
    PostgresPendingApprovals,
    create_table_sql,
)
from signoff.channels.database.dbapi import DbApiPendingApprovals
from signoff.channels.database.repository import MemoryPendingApprovals, PendingApprovalsRepository
from signoff.channels.notification import idempotency_key
from signoff.clock import ManualClock, iso
from signoff.errors import SendFailed
from signoff.keys.tokens import signer_from
from signoff.notify.compose import Composer
from signoff.secrets.memory import MemorySecrets
from tests.support.builders import T0, pending_approval
from tests.support.services import postgres_server as postgres_server

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.support.services import PostgresServer

ASKED = datetime(2026, 1, 1, 11, 53, tzinfo=UTC)


def row(pending_id: str = "p1", **changes: Any) -> PendingApprovalRow:
    """The seed's row of a refund approval asked at ASKED."""
    base = PendingApprovalRow.model_validate(
        {
            "pendingId": pending_id,
            "tool": "issue_refund",
            "args": {"orderId": "A-17", "amount": 25},
            "scope": {"tenant": "acme", "environment": "production", "agent": "refunds"},
            "reason": "matched rule 'refunds-need-approval'",
            "requestedAt": iso(ASKED),
        }
    )
    return base.model_copy(update=changes)


class Adapter(Protocol):
    repository: PendingApprovalsRepository

    def stored(self) -> list[tuple[dict[str, Any], str]]:
        """Every stored row as the seed's wire object, with its key; oldest first."""
        ...


class MemoryAdapter:
    def __init__(self) -> None:
        self.memory = MemoryPendingApprovals()
        self.repository: PendingApprovalsRepository = self.memory

    def stored(self) -> list[tuple[dict[str, Any], str]]:
        return [(item.row.wire(), item.idempotency_key) for item in self.memory.rows()]


class PostgresAdapter:
    def __init__(self, server: PostgresServer) -> None:
        self.dsn = server.dsn()
        self.table = f"approvals_{secrets.token_hex(4)}"
        with psycopg.connect(self.dsn, autocommit=True) as connection:
            connection.execute(create_table_sql(self.table))
        self.repository: PendingApprovalsRepository = PostgresPendingApprovals(self.dsn, self.table)

    def stored(self) -> list[tuple[dict[str, Any], str]]:
        with psycopg.connect(self.dsn, autocommit=True) as connection:
            rows = connection.execute(
                "SELECT pending_id, tool, args, scope, reason, requested_at, idempotency_key"
                f' FROM "{self.table}" ORDER BY requested_at, pending_id'
            ).fetchall()
        return [
            (
                {
                    "pendingId": pending_id,
                    "tool": tool,
                    "args": args,
                    "scope": scope,
                    "reason": reason,
                    "requestedAt": iso(requested_at),
                },
                key,
            )
            for pending_id, tool, args, scope, reason, requested_at, key in rows
        ]

    def close(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as connection:
            connection.execute(f'DROP TABLE IF EXISTS "{self.table}"')


class SqliteAdapter:
    """The DB-API adapter over SQLite, in the table create_table_sql makes."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        with contextlib.closing(sqlite3.connect(self.path)) as connection:
            connection.execute(create_table_sql("approvals"))
        self.repository: PendingApprovalsRepository = DbApiPendingApprovals(
            lambda: sqlite3.connect(self.path), "approvals", driver=sqlite3
        )

    def stored(self) -> list[tuple[dict[str, Any], str]]:
        with contextlib.closing(sqlite3.connect(self.path)) as connection:
            rows = connection.execute(
                "SELECT pending_id, tool, args, scope, reason, requested_at, idempotency_key"
                " FROM approvals ORDER BY requested_at, pending_id"
            ).fetchall()
        return [
            (
                {
                    "pendingId": pending_id,
                    "tool": tool,
                    "args": json.loads(args),
                    "scope": json.loads(scope),
                    "reason": reason,
                    "requestedAt": requested_at,
                },
                key,
            )
            for pending_id, tool, args, scope, reason, requested_at, key in rows
        ]


class PsycopgDbApiAdapter(PostgresAdapter):
    """The DB-API adapter with psycopg as the driver, on the same kind of table."""

    def __init__(self, server: PostgresServer) -> None:
        super().__init__(server)
        dsn = self.dsn
        self.repository = DbApiPendingApprovals(
            lambda: psycopg.connect(dsn), self.table, driver=psycopg
        )


@pytest.fixture(
    params=[
        "memory",
        "dbapi-sqlite",
        pytest.param("postgresql", marks=pytest.mark.slow),
        pytest.param("dbapi-psycopg", marks=pytest.mark.slow),
    ]
)
def adapter(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Adapter]:
    if request.param == "memory":
        yield MemoryAdapter()
        return
    if request.param == "dbapi-sqlite":
        yield SqliteAdapter(tmp_path / "approvals.db")
        return
    server = request.getfixturevalue("postgres_server")
    made = PostgresAdapter(server) if request.param == "postgresql" else PsycopgDbApiAdapter(server)
    yield made
    made.close()


# -- the contract ------------------------------------------------------------------------


def test_a_row_is_stored_as_the_seeds_row_with_its_key(adapter: Adapter) -> None:
    assert adapter.repository.insert_once(row("p1"), "run-1:p1:db") is True

    assert adapter.stored() == [(row("p1").wire(), "run-1:p1:db")]


def test_a_second_insert_of_the_same_item_changes_nothing(adapter: Adapter) -> None:
    # given a stored row
    adapter.repository.insert_once(row("p1"), "run-1:p1:db")

    # when the same pending item comes again (a retry; another channel on the same table)
    again = adapter.repository.insert_once(
        row("p1", reason="another", requested_at=ASKED + timedelta(hours=1)), "run-1:p1:other"
    )

    # then the first row stands, unchanged
    assert again is False
    assert adapter.stored() == [(row("p1").wire(), "run-1:p1:db")]


def test_other_items_are_stored_beside_it(adapter: Adapter) -> None:
    adapter.repository.insert_once(row("p1"), "run-1:p1:db")
    later = ASKED + timedelta(minutes=1)

    assert adapter.repository.insert_once(row("p2", requested_at=later), "run-1:p2:db") is True

    assert [wire["pendingId"] for wire, _ in adapter.stored()] == ["p1", "p2"]


def test_concurrent_inserts_of_one_item_store_it_once(adapter: Adapter) -> None:
    # given eight senders racing on the same item (the notifier sends from threads)
    results: list[bool | str] = []
    start = threading.Barrier(8)

    def send() -> None:
        start.wait()
        try:
            results.append(adapter.repository.insert_once(row("p1"), "run-1:p1:db"))
        except SendFailed as exc:  # kept, so a lost race shows in the assertion
            results.append(exc.reason)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # then exactly one of them stored it
    assert sorted(results, key=str) == [False] * 7 + [True]
    assert len(adapter.stored()) == 1


def test_the_location_names_where_rows_go(adapter: Adapter) -> None:
    assert adapter.repository.location
    assert isinstance(adapter.repository, PendingApprovalsRepository)


# -- the channel over a repository -------------------------------------------------------


def composed_approval() -> Any:
    """An approval asked at T0 for the gate's reason, composed as the notifier does."""
    signer = signer_from(MemorySecrets({"resume-signing": "k" * 32}))
    composer = Composer(signer=signer, public_url="https://api.example.com")
    return composer.for_item(pending_approval("p1", reason="refunds need a human"))


def test_the_channel_hands_the_repository_the_gates_reason_and_the_ask_time() -> None:
    # given a database channel over a memory repository, sending an hour after the ask
    memory = MemoryPendingApprovals()
    sent_at = datetime.fromtimestamp(T0, tz=UTC) + timedelta(hours=1)
    channel = DatabaseChannel("dash", memory, clock=ManualClock(sent_at), environment="production")
    notification = composed_approval()
    key = idempotency_key(notification.run_id, "p1", "dash")

    # when it is sent twice
    first = channel.notify(notification, key)
    channel.notify(notification, key)

    # then the repository holds one seed row: the gate's reason, the time it asked
    (stored,) = memory.rows()
    assert stored.idempotency_key == key
    assert stored.row.wire() == {
        "pendingId": "p1",
        "tool": "refund",
        "args": {"order": "A-17", "amount": 25},
        "scope": {"tenant": "acme", "environment": "production", "agent": "refunds"},
        "reason": "refunds need a human",
        "requestedAt": iso(datetime.fromtimestamp(T0, tz=UTC)),
    }
    assert first.receipt == {"table": "memory"}


class Refusing:
    """A repository that fails the way an adapter does, with its own channel label."""

    location = "refusing"

    def __init__(self, *, retryable: bool) -> None:
        self.retryable = retryable

    def insert_once(self, row: PendingApprovalRow, idempotency_key: str) -> bool:
        raise SendFailed("database", "the table is read-only", retryable=self.retryable)


@pytest.mark.parametrize("retryable", [True, False])
def test_a_repository_failure_reaches_the_notifier_under_the_channels_name(
    retryable: bool,
) -> None:
    channel = DatabaseChannel("dash", Refusing(retryable=retryable), clock=ManualClock())

    with pytest.raises(SendFailed) as failed:
        channel.notify(composed_approval(), "run-1:p1:dash")

    assert failed.value.channel == "dash"
    assert failed.value.retryable is retryable
    assert failed.value.reason == "the table is read-only"


# -- the DB-API adapter's failures -------------------------------------------------------


def test_a_dbapi_driver_error_is_a_send_failure(tmp_path: Path) -> None:
    # given a SQLite file without the table
    path = str(tmp_path / "empty.db")
    default = DbApiPendingApprovals(lambda: sqlite3.connect(path), "approvals", driver=sqlite3)
    strict = DbApiPendingApprovals(
        lambda: sqlite3.connect(path), "approvals", driver=sqlite3, retryable=lambda _: False
    )

    # when each inserts, then SQLite's OperationalError is retryable unless the caller says not
    with pytest.raises(SendFailed) as failed:
        default.insert_once(row("p1"), "run-1:p1:db")
    assert failed.value.retryable is True
    assert "no such table" in failed.value.reason
    with pytest.raises(SendFailed) as refused:
        strict.insert_once(row("p1"), "run-1:p1:db")
    assert refused.value.retryable is False


def test_a_dbapi_table_or_driver_that_cannot_work_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="not a table name"):
        DbApiPendingApprovals(lambda: None, "x; DROP TABLE y", driver=sqlite3)
    with pytest.raises(ValueError, match="paramstyle"):
        DbApiPendingApprovals(lambda: None, driver=json)
