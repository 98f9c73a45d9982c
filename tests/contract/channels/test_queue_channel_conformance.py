"""The queue channels under ``signoff.testing``'s channel checks: database and Redis.

The same checks every built-in channel passes (``CHANNEL_CHECKS``). The database
channel writes to a memory repository and to a real PostgreSQL table; the Redis
channel to a real redis-server. A service's refusal is scripted at the edge the
adapter translates (a repository wrapper raising the adapter's ``SendFailed``; a
client whose next ``EVALSHA`` raises redis-py's error), then sends pass on; what
was delivered is read back from the table or the list. A retry after an
unrecorded send stores nothing new: the row's unique columns, the Redis marker.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
import redis

from signoff.channels.database.channel import (
    DatabaseChannel,
    PostgresPendingApprovals,
    create_table_sql,
)
from signoff.channels.database.redis import RedisChannel
from signoff.channels.database.repository import MemoryPendingApprovals, PendingApprovalsRepository
from signoff.channels.notification import idempotency_key
from signoff.clock import ManualClock
from signoff.errors import SendFailed
from signoff.testing import CHANNEL_CHECKS, ChannelHarness
from signoff.testing.channels import RUN_ID
from tests.support.services import postgres_server as postgres_server
from tests.support.services import redis_server as redis_server

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from signoff.channels.base import Channel
    from signoff.channels.database.rows import PendingApprovalRow
    from tests.support.services import PostgresServer, RedisServer


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


class ScriptedRedis(redis.Redis):
    """A real client whose next ``EVALSHA`` calls fail as redis-py does for a failing server."""

    failures: list[bool]

    def evalsha(self, *args: Any, **kwargs: Any) -> Any:
        if self.failures:
            retryable = self.failures.pop(0)
            # A dropped connection is retried by the notifier; a refused command is not.
            raise redis.ConnectionError("scripted") if retryable else redis.ResponseError("NOPERM")
        return super().evalsha(*args, **kwargs)


class RedisHarness:
    dedupes_unrecorded = True

    def __init__(self, server: RedisServer) -> None:
        self.client = ScriptedRedis(host="127.0.0.1", port=server.port)
        self.client.failures = []
        self.queue_key = f"conformance:{secrets.token_hex(4)}"
        self.channel: Channel = RedisChannel(
            "queue", self.client, self.queue_key, clock=ManualClock()
        )

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self.client.failures += [retryable] * times

    def delivered(self) -> list[str]:
        # Oldest first; the pushed row holds no key, the pending id names the send.
        rows = [json.loads(raw) for raw in reversed(self.client.lrange(self.queue_key, 0, -1))]
        return [idempotency_key(RUN_ID, row["pendingId"], "queue") for row in rows]

    def carried(self, key: str) -> str:
        return key


@pytest.fixture(
    params=[
        "memory",
        pytest.param("postgresql", marks=pytest.mark.slow),
        pytest.param("redis", marks=pytest.mark.slow),
    ]
)
def harness(request: pytest.FixtureRequest) -> Iterator[ChannelHarness]:
    if request.param == "memory":
        memory = MemoryPendingApprovals()
        yield DatabaseHarness(memory, lambda: [item.idempotency_key for item in memory.rows()])
        return
    if request.param == "redis":
        made_redis = RedisHarness(request.getfixturevalue("redis_server"))
        yield made_redis
        made_redis.client.delete(made_redis.queue_key)
        made_redis.client.close()
        return
    made, drop = postgres_harness(request.getfixturevalue("postgres_server"))
    yield made
    drop()


@pytest.mark.parametrize("check", CHANNEL_CHECKS.values(), ids=CHANNEL_CHECKS.keys())
def test_database_channel_conformance(
    harness: ChannelHarness, check: Callable[[ChannelHarness], None]
) -> None:
    check(harness)
