"""Contract of the approval-only queue channels, against a real Redis and a real PostgreSQL.

Both channels are built the way a deployment builds them (``from_config`` with a
secret source) and checked by reading what they left on the server: the Redis
list, the PostgreSQL table. Then what only one of them does (the Redis marker,
table names and privileges).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import psycopg
import pytest
import redis
from pydantic import ValidationError
from redis.crc import key_slot

from signoff.channels.base import Delivery
from signoff.channels.build import BuildContext
from signoff.channels.config import SecretRef
from signoff.channels.database.channel import (
    DatabaseChannel,
    PendingApprovalRow,
    PostgresPendingApprovals,
    create_table_sql,
    validate_table,
)
from signoff.channels.database.redis import RedisChannel
from signoff.channels.notification import Notification, idempotency_key
from signoff.channels.settings.database import DatabaseSettings
from signoff.channels.settings.redis import RedisSettings
from signoff.clock import ManualClock, iso
from signoff.errors import SecretMissing, SendFailed
from signoff.keys.tokens import signer_from
from signoff.notify.compose import Composer
from signoff.secrets.memory import MemorySecrets
from tests.support.builders import T0, approval_notification, pending_approval
from tests.support.services import postgres_server as postgres_server
from tests.support.services import redis_server as redis_server


def redis_settings(url_secret: str, **extra: Any) -> RedisSettings:
    """A redis channel's channels.yaml entry whose URL is the secret ``url_secret``."""
    return RedisSettings(type="redis", url=SecretRef(secret=url_secret), **extra)


def database_settings(dsn_secret: str, **extra: Any) -> DatabaseSettings:
    """A database channel's channels.yaml entry whose DSN is the secret ``dsn_secret``."""
    return DatabaseSettings(type="database", dsn=SecretRef(secret=dsn_secret), **extra)


if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.channels.base import Channel
    from tests.support.services import PostgresServer, RedisServer

pytestmark = pytest.mark.slow

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
# When the gate asked, minutes before the send: the row carries this, never the send time.
ASKED = NOW - timedelta(minutes=7)
REASON = "matched rule 'refunds-need-approval'"
TOKEN = "rt.resume-token-that-must-not-leak"
ENVIRONMENT = "production"
CHANNEL = "ops-queue"
ROW_FIELDS = {"pendingId", "tool", "args", "scope", "reason", "requestedAt"}

Credentials = Literal["good", "wrong-password", "no-permission"]


def approval(pending_id: str = "p1", **changes: Any) -> Notification:
    """An approval with every field a channel could leak set, its links carrying TOKEN."""
    return approval_notification(
        pending_id,
        token=TOKEN,
        session_id="s1",
        tenant="acme",
        reason=REASON,
        requested_at=iso(ASKED),
        **changes,
    )


def expected_row(pending_id: str = "p1") -> dict[str, Any]:
    """The seed's PendingApprovalRow for ``approval(pending_id)``, as a reader sees it."""
    return {
        "pendingId": pending_id,
        "tool": "issue_refund",
        "args": {"orderId": "A-17", "amount": 25},
        "scope": {"tenant": "acme", "environment": ENVIRONMENT, "agent": "customer-service"},
        "reason": REASON,
        "requestedAt": "2026-01-01T11:53:00.000Z",
    }


def key_for(notification: Notification) -> str:
    assert notification.pending_id is not None
    return idempotency_key(notification.run_id, notification.pending_id, CHANNEL)


# -- the two backends, behind one test-side interface ------------------------------------


class RedisBackend:
    """A fresh list on the session's redis-server, and ACL users for the refusals."""

    kind = "redis"

    def __init__(self, server: RedisServer) -> None:
        self.server = server
        self.queue_key = f"signoff-test:{secrets.token_hex(4)}:pending-approvals"
        self.admin = redis.Redis.from_url(server.url)
        self.password = secrets.token_urlsafe(12)
        self.create_users()

    def create_users(self) -> None:
        """A user that may do everything, and one whose keys are elsewhere (ACLs are not saved)."""
        self.admin.acl_setuser(
            "signoff-writer", enabled=True, passwords=[f"+{self.password}"], keys=["*"],
            commands=["+@all"], reset=True,
        )  # fmt: skip
        self.admin.acl_setuser(
            "signoff-elsewhere", enabled=True, passwords=[f"+{self.password}"],
            keys=["elsewhere:*"], commands=["+@all"], reset=True,
        )  # fmt: skip

    def channel(
        self, credentials: Credentials = "good", *, at: datetime = NOW, **settings: Any
    ) -> RedisChannel:
        user, password = {
            "good": ("signoff-writer", self.password),
            "wrong-password": ("signoff-writer", "not-the-password"),
            "no-permission": ("signoff-elsewhere", self.password),
        }[credentials]
        url = self.server.url.replace("redis://", f"redis://{user}:{password}@")
        source = MemorySecrets({"redis-url": url})
        config = RedisSettings.model_validate(
            {
                "type": "redis",
                "url": {"secret": "redis-url"},
                "queueKey": self.queue_key,
                **settings,
            }
        )
        context = BuildContext(secrets=source, environment=ENVIRONMENT, clock=ManualClock(at))
        return RedisChannel.from_config(config, context, name=CHANNEL)

    def delivered(self) -> list[dict[str, Any]]:
        # LPUSH puts the newest at the head: oldest first is the list reversed.
        raw = self.admin.lrange(self.queue_key, 0, -1)
        return [json.loads(item) for item in reversed(raw)]

    @contextlib.contextmanager
    def down(self) -> Iterator[None]:
        with self.server.down():
            yield
        self.create_users()

    def close(self) -> None:
        self.admin.close()


class DatabaseBackend:
    """A fresh table on the session's PostgreSQL, written by a role granted only what it needs."""

    kind = "database"

    def __init__(self, server: PostgresServer, roles: Roles) -> None:
        self.server = server
        self.roles = roles
        self.table = f"pending_approvals_{secrets.token_hex(4)}"
        with self.admin() as connection:
            connection.execute(create_table_sql(self.table))
            # What the module docstring tells an operator to grant, and no more.
            connection.execute(f'GRANT INSERT ON "{self.table}" TO {roles.writer}')

    def admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.server.dsn(), autocommit=True)

    def channel(
        self, credentials: Credentials = "good", *, at: datetime = NOW, **settings: Any
    ) -> DatabaseChannel:
        user, password = {
            "good": (self.roles.writer, self.roles.password),
            "wrong-password": (self.roles.writer, "not-the-password"),
            "no-permission": (self.roles.reader, self.roles.password),
        }[credentials]
        source = MemorySecrets({"pg-dsn": self.server.dsn(user=user, password=password)})
        config = DatabaseSettings.model_validate(
            {
                "type": "database",
                "dsn": {"secret": "pg-dsn"},
                "table": self.table,
                "connectTimeoutSeconds": 3,
                **settings,
            }
        )
        context = BuildContext(secrets=source, environment=ENVIRONMENT, clock=ManualClock(at))
        return DatabaseChannel.from_config(config, context, name=CHANNEL)

    def delivered(self) -> list[dict[str, Any]]:
        with self.admin() as connection:
            rows = connection.execute(
                "SELECT pending_id, tool, args, scope, reason, requested_at"
                f' FROM "{self.table}" ORDER BY requested_at, pending_id'
            ).fetchall()
        return [
            {
                "pendingId": pending_id,
                "tool": tool,
                "args": args,
                "scope": scope,
                "reason": reason,
                "requestedAt": iso(requested_at),
            }
            for pending_id, tool, args, scope, reason, requested_at in rows
        ]

    @contextlib.contextmanager
    def down(self) -> Iterator[None]:
        with self.server.down():
            yield

    def close(self) -> None:
        with self.admin() as connection:
            connection.execute(f'DROP TABLE IF EXISTS "{self.table}"')


@dataclass(frozen=True)
class Roles:
    """Login roles: ``writer`` is granted what the channel needs on each table, ``reader`` none."""

    writer: str = "signoff_writer"
    reader: str = "signoff_reader"
    password: str = field(default_factory=lambda: secrets.token_urlsafe(12))


@pytest.fixture(scope="module")
def roles(postgres_server: PostgresServer) -> Roles:
    made = Roles()
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as connection:
        for role in (made.writer, made.reader):
            connection.execute(f"DROP ROLE IF EXISTS {role}")
            connection.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{made.password}'")
    return made


Backend = RedisBackend | DatabaseBackend


@pytest.fixture(params=["redis", "database"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    made: Backend
    if request.param == "redis":
        made = RedisBackend(request.getfixturevalue("redis_server"))
    else:
        made = DatabaseBackend(
            request.getfixturevalue("postgres_server"), request.getfixturevalue("roles")
        )
    yield made
    made.close()


# -- the contract ------------------------------------------------------------------------


def test_an_approval_is_delivered_once_even_when_notified_twice(backend: Backend) -> None:
    # given an approval and the channel a deployment builds
    channel: Channel = backend.channel()
    notification = approval("p1")

    # when the notifier sends it twice with the same key (a retry after a lost response)
    first = channel.notify(notification, key_for(notification))
    second = channel.notify(notification, key_for(notification))

    # then the list / table holds the seed's row exactly once
    assert backend.delivered() == [expected_row("p1")]
    assert first == second
    assert first.receipt  # names the list or table, for the outbox row


def test_a_retry_from_a_fresh_instance_still_delivers_once(backend: Backend) -> None:
    # given a send that succeeded in one Lambda sandbox
    notification = approval("p1")
    backend.channel().notify(notification, key_for(notification))

    # when another sandbox (a new channel, a later clock) retries with the same key
    later = backend.channel(at=NOW + timedelta(minutes=5))
    later.notify(notification, key_for(notification))

    # then nothing was added, and the first requestedAt stands
    assert backend.delivered() == [expected_row("p1")]


def test_the_row_holds_the_gates_reason_and_the_time_it_asked(backend: Backend) -> None:
    # given a pending approval asked at T0 for the gate's reason, composed as the notifier does
    item = pending_approval("p1", reason="refunds need a human")
    signer = signer_from(MemorySecrets({"resume-signing": "k" * 32}))
    notification = Composer(signer=signer, public_url="https://api.example.com").for_item(item)

    # when the channel sends it an hour later
    backend.channel(at=datetime.fromtimestamp(T0, tz=UTC) + timedelta(hours=1)).notify(
        notification, key_for(notification)
    )

    # then the seed's row names the gate's reason (not the message title) and the ask time
    (row,) = backend.delivered()
    assert row["reason"] == "refunds need a human"
    assert row["requestedAt"] == iso(datetime.fromtimestamp(T0, tz=UTC))
    assert row["scope"] == {"tenant": "acme", "environment": ENVIRONMENT, "agent": "refunds"}


def test_another_pending_item_is_delivered_again(backend: Backend) -> None:
    channel = backend.channel()
    first, second = approval("p1"), approval("p2", run_id="run-2")

    channel.notify(first, key_for(first))
    channel.notify(second, key_for(second))
    channel.notify(first, key_for(first))

    assert backend.delivered() == [expected_row("p1"), expected_row("p2")]


@pytest.mark.parametrize("kind", ["question", "stuck", "result", "info"])
def test_other_kinds_are_accepted_and_deliver_nothing(backend: Backend, kind: str) -> None:
    channel = backend.channel()
    notification = approval("p1", kind=kind)

    delivery = channel.notify(notification, key_for(notification))

    assert delivery == Delivery()
    assert backend.delivered() == []


def test_the_row_holds_no_link_and_no_resume_token(backend: Backend) -> None:
    notification = approval("p1")

    backend.channel().notify(notification, key_for(notification))

    (row,) = backend.delivered()
    assert set(row) == ROW_FIELDS
    assert TOKEN not in json.dumps(row)
    assert "signoff.example" not in json.dumps(row)


def test_an_approval_without_a_pending_id_is_a_permanent_failure(backend: Backend) -> None:
    channel = backend.channel()

    with pytest.raises(SendFailed) as failed:
        channel.notify(approval().model_copy(update={"pending_id": None}), "run-1::ops-queue")

    assert failed.value.retryable is False
    assert failed.value.channel == CHANNEL
    assert backend.delivered() == []


def test_a_stopped_server_is_retryable_and_the_retry_delivers_once(backend: Backend) -> None:
    # given a channel built while the server was up
    channel = backend.channel()
    notification = approval("p1")

    # when the server is down at send time
    with backend.down(), pytest.raises(SendFailed) as failed:
        channel.notify(notification, key_for(notification))

    # then the failure is worth retrying, and the retry after it is back delivers once
    assert failed.value.retryable is True
    assert failed.value.channel == CHANNEL
    channel.notify(notification, key_for(notification))
    channel.notify(notification, key_for(notification))
    assert backend.delivered() == [expected_row("p1")]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that takes connections and never answers: a hung server."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield int(listener.getsockname()[1])


@pytest.mark.parametrize("kind", ["redis", "database"])
def test_a_server_that_does_not_answer_in_time_is_retryable(kind: str, silent_port: int) -> None:
    # given a channel whose server accepts the connection and then says nothing
    channel: Channel
    if kind == "redis":
        source = MemorySecrets({"redis-url": f"redis://127.0.0.1:{silent_port}/0"})
        settings = redis_settings("redis-url", timeout_seconds=0.3)
        channel = RedisChannel.from_config(
            settings, BuildContext(secrets=source, clock=ManualClock(NOW))
        )
    else:
        dsn = f"postgresql://signoff:pw@127.0.0.1:{silent_port}/postgres"
        # libpq's shortest connect timeout is 2 s
        settings_db = database_settings("pg-dsn", connect_timeout_seconds=2)
        source = MemorySecrets({"pg-dsn": dsn})
        channel = DatabaseChannel.from_config(
            settings_db, BuildContext(secrets=source, clock=ManualClock(NOW))
        )
    notification = approval("p1")

    # when it sends, then it gives up within its timeout, and a retry may pass
    with pytest.raises(SendFailed) as failed:
        channel.notify(notification, key_for(notification))
    assert failed.value.retryable is True


@pytest.mark.parametrize("credentials", ["wrong-password", "no-permission"])
def test_refused_credentials_are_a_permanent_failure(
    backend: Backend, credentials: Credentials
) -> None:
    channel = backend.channel(credentials)
    notification = approval("p1")

    with pytest.raises(SendFailed) as failed:
        channel.notify(notification, key_for(notification))

    assert failed.value.retryable is False
    assert failed.value.channel == CHANNEL
    assert backend.delivered() == []


def test_failures_never_show_the_password(backend: Backend) -> None:
    channel = backend.channel("wrong-password")
    notification = approval("p1")

    with pytest.raises(SendFailed) as failed:
        channel.notify(notification, key_for(notification))

    assert "not-the-password" not in str(failed.value)
    assert "not-the-password" not in repr(channel)


def test_a_missing_secret_fails_when_the_channel_is_built() -> None:
    with pytest.raises(SecretMissing):
        RedisChannel.from_config(redis_settings("nope"), BuildContext(secrets=MemorySecrets()))
    with pytest.raises(SecretMissing):
        DatabaseChannel.from_config(
            database_settings("nope"), BuildContext(secrets=MemorySecrets())
        )


# -- Redis only --------------------------------------------------------------------------


@pytest.fixture
def redis_backend(redis_server: RedisServer) -> Iterator[RedisBackend]:
    made = RedisBackend(redis_server)
    yield made
    made.close()


def test_the_redis_marker_expires_after_its_ttl(redis_backend: RedisBackend) -> None:
    channel = redis_backend.channel()
    notification = approval("p1")

    channel.notify(notification, key_for(notification))

    ttl = redis_backend.admin.ttl(channel.marker_key(key_for(notification)))
    assert timedelta(days=6) < timedelta(seconds=ttl) <= channel.marker_ttl


def test_redis_marker_and_list_share_a_cluster_slot(redis_backend: RedisBackend) -> None:
    channel = redis_backend.channel()
    marker = channel.marker_key("run-1:p1:ops-queue")

    # The slot Redis Cluster would give each key (redis-py computes it as the server does).
    assert key_slot(marker.encode()) == key_slot(channel.queue_key.encode())
    assert marker != channel.queue_key


def test_a_failed_redis_push_leaves_no_marker_to_swallow_the_retry(
    redis_backend: RedisBackend,
) -> None:
    # given the queue key holds a string, not a list (a misconfigured deployment)
    redis_backend.admin.set(redis_backend.queue_key, "not a list")
    channel = redis_backend.channel()
    notification = approval("p1")

    # when the channel pushes: a permanent failure (WRONGTYPE)
    with pytest.raises(SendFailed) as failed:
        channel.notify(notification, key_for(notification))
    assert failed.value.retryable is False

    # then once the key is fixed, the same send delivers
    redis_backend.admin.delete(redis_backend.queue_key)
    channel.notify(notification, key_for(notification))
    assert redis_backend.delivered() == [expected_row("p1")]


def test_a_redis_queue_key_with_braces_is_refused() -> None:
    with pytest.raises(ValidationError):
        redis_settings("redis-url", queue_key="{signoff}:pending")
    with pytest.raises(ValueError, match="braces"):
        RedisChannel("q", redis.Redis(), "{signoff}:pending", clock=ManualClock(NOW))


# -- PostgreSQL only ---------------------------------------------------------------------


@pytest.fixture
def database_backend(postgres_server: PostgresServer, roles: Roles) -> Iterator[DatabaseBackend]:
    made = DatabaseBackend(postgres_server, roles)
    yield made
    made.close()


def test_the_row_keeps_its_idempotency_key_and_a_timestamptz(
    database_backend: DatabaseBackend,
) -> None:
    notification = approval("p1")

    database_backend.channel().notify(notification, key_for(notification))

    with database_backend.admin() as connection:
        stored = connection.execute(
            f'SELECT idempotency_key, requested_at FROM "{database_backend.table}"'
        ).fetchall()
    assert stored == [("run-1:p1:ops-queue", ASKED)]


def test_a_locked_table_times_out_as_a_retryable_failure(
    database_backend: DatabaseBackend,
) -> None:
    # given a migration holding the table's lock
    channel = database_backend.channel(statementTimeoutSeconds=1)
    notification = approval("p1")
    with database_backend.admin() as migration:
        migration.autocommit = False
        migration.execute(f'LOCK TABLE "{database_backend.table}" IN ACCESS EXCLUSIVE MODE')

        # when the channel inserts, then its statement timeout ends the wait: retryable
        with pytest.raises(SendFailed) as failed:
            channel.notify(notification, key_for(notification))
        migration.rollback()

    assert failed.value.retryable is True
    assert "QueryCanceled" in failed.value.reason
    channel.notify(notification, key_for(notification))
    assert database_backend.delivered() == [expected_row("p1")]


def test_a_missing_table_is_a_permanent_failure(database_backend: DatabaseBackend) -> None:
    channel = database_backend.channel(table="no_such_table")
    notification = approval("p1")

    with pytest.raises(SendFailed) as failed:
        channel.notify(notification, key_for(notification))

    assert failed.value.retryable is False
    assert "UndefinedTable" in failed.value.reason


def test_a_schema_qualified_table_is_written(database_backend: DatabaseBackend) -> None:
    # given an operator's table in its own schema, made with create_table_sql
    schema = f"dash_{secrets.token_hex(3)}"
    table = f"{schema}.Pending"  # quoted everywhere, so its case is kept
    writer = database_backend.roles.writer
    with database_backend.admin() as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
        connection.execute(create_table_sql(table))
        connection.execute(f"GRANT USAGE ON SCHEMA {schema} TO {writer}")
        connection.execute(f'GRANT INSERT ON {schema}."Pending" TO {writer}')
    notification = approval("p1")

    # when the channel sends to it
    database_backend.channel(table=table).notify(notification, key_for(notification))

    # then the row is there
    with database_backend.admin() as connection:
        pending_ids = connection.execute(f'SELECT pending_id FROM {schema}."Pending"').fetchall()
        connection.execute(f"DROP SCHEMA {schema} CASCADE")
    assert pending_ids == [("p1",)]


@pytest.mark.parametrize(
    "table", ["", "a.b.c", "pending; DROP TABLE x", 'pending"', "1pending", "pend-ing", "x" * 64]
)
def test_a_table_that_is_no_plain_identifier_is_refused(table: str) -> None:
    with pytest.raises(ValueError, match="not a table name"):
        validate_table(table)
    with pytest.raises(ValidationError):
        database_settings("pg-dsn", table=table)
    with pytest.raises(ValueError, match="not a table name"):
        create_table_sql(table)
    with pytest.raises(ValueError, match="not a table name"):
        PostgresPendingApprovals("postgresql://", table)


def test_the_row_model_is_the_seeds_wire_shape() -> None:
    row = PendingApprovalRow.from_notification(
        approval("p1"), channel=CHANNEL, environment=ENVIRONMENT, requested_at=NOW
    )

    assert row.wire() == expected_row("p1")
    assert json.loads(row.model_dump_json(by_alias=True)) == expected_row("p1")
