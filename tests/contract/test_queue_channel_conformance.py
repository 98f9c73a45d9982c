"""The database channel under ``signoff.testing``'s channel checks, over each repository.

The same checks every built-in channel passes (``CHANNEL_CHECKS``), with the
channel writing to a memory repository and to a real PostgreSQL table. A
service's refusal is scripted in front of the repository (a wrapper that raises
the adapter's ``SendFailed`` for the next sends, then passes them on); what
was delivered is read back from the repository — the table, for PostgreSQL.
A retry after an unrecorded send stores nothing new: the row's unique columns.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import psycopg
import pytest

from signoff.channels.approvals import MemoryPendingApprovals, PendingApprovalsRepository
from signoff.channels.database import DatabaseChannel, PostgresPendingApprovals, create_table_sql
from signoff.clock import ManualClock
from signoff.errors import SendFailed
from signoff.testing import CHANNEL_CHECKS, ChannelHarness
from tests.support.services import postgres_server as postgres_server

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from signoff.channels._approval import PendingApprovalRow
    from signoff.channels.base import Channel
    from tests.support.services import PostgresServer


class Scripted:
    """A repository that refuses the next sends as its adapter would, then passes them on."""

    def __init__(self, inner: PendingApprovalsRepository) -> None:
        self.inner = inner
        self.failures: list[bool] = []

    @property
    def location(self) -> str:
        return self.inner.location

    def insert_once(self, row: PendingApprovalRow, idempotency_key: str) -> bool:
        if self.failures:
            retryable = self.failures.pop(0)
            raise SendFailed("database", "scripted refusal", retryable=retryable)
        return self.inner.insert_once(row, idempotency_key)


class DatabaseHarness:
    dedupes_unrecorded = True

    def __init__(
        self, repository: PendingApprovalsRepository, read: Callable[[], list[str]]
    ) -> None:
        self.scripted = Scripted(repository)
        self.channel: Channel = DatabaseChannel("dashboard", self.scripted, clock=ManualClock())
        self._read = read

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self.scripted.failures += [retryable] * times

    def delivered(self) -> list[str]:
        return self._read()

    def carried(self, key: str) -> str:
        return key


def postgres_harness(server: PostgresServer) -> tuple[DatabaseHarness, Callable[[], None]]:
    dsn = server.dsn()
    table = f"conformance_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(create_table_sql(table))

    def read() -> list[str]:
        with psycopg.connect(dsn, autocommit=True) as connection:
            rows = connection.execute(
                f'SELECT idempotency_key FROM "{table}" ORDER BY pending_id'
            ).fetchall()
        return [key for (key,) in rows]

    def drop() -> None:
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(f'DROP TABLE IF EXISTS "{table}"')

    return DatabaseHarness(PostgresPendingApprovals(dsn, table), read), drop


@pytest.fixture(params=["memory", pytest.param("postgresql", marks=pytest.mark.slow)])
def harness(request: pytest.FixtureRequest) -> Iterator[ChannelHarness]:
    if request.param == "memory":
        memory = MemoryPendingApprovals()
        yield DatabaseHarness(memory, lambda: [item.idempotency_key for item in memory.rows()])
        return
    made, drop = postgres_harness(request.getfixturevalue("postgres_server"))
    yield made
    drop()


@pytest.mark.parametrize("check", CHANNEL_CHECKS.values(), ids=CHANNEL_CHECKS.keys())
def test_database_channel_conformance(
    harness: ChannelHarness, check: Callable[[ChannelHarness], None]
) -> None:
    check(harness)
