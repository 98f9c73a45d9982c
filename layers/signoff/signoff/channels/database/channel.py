"""The database channel: one PostgreSQL row per pending approval, for a dashboard or worker.

Approval-only, like loopengine's ``DatabaseApprover``: an ``approval`` notification
becomes a row of loopengine's ``PendingApprovalRow`` shape (``pendingId``, ``tool``,
``args``, ``scope {tenant, environment, agent}``, ``reason``, ``requestedAt``) with
the gate's reason and the time the item was asked; every other kind is accepted
and does nothing. The Redis channel pushes the same record as JSON, so both
backends hand a reader the same thing.

The channel writes through a ``PendingApprovalsRepository``
(``signoff.channels.database.repository``, loopengine's repository seam): ``from_config``
builds ``PostgresPendingApprovals`` below; a plug-in or test passes another
(memory, any DB-API driver, its own ORM) to ``DatabaseChannel`` directly.

The insert is idempotent: ``ON CONFLICT DO NOTHING``, so a retry of the same
send — or a second database channel writing the same table — leaves one row.
The clause names no conflict target on purpose: both unique columns are then
arbiters, and two concurrent first sends of one item (two notifier invocations)
cannot fail on ``idempotency_key`` after the ``pending_id`` check let both pass.
The channel never creates its table; an operator does, once, with the statement
``create_table_sql(table)`` returns (here for the default table)::

    CREATE TABLE IF NOT EXISTS "signoff_pending_approvals" (
        pending_id      text PRIMARY KEY,
        tool            text NOT NULL,
        args            jsonb NOT NULL,
        scope           jsonb NOT NULL,
        reason          text NOT NULL,
        requested_at    timestamptz NOT NULL,
        idempotency_key text NOT NULL UNIQUE
    );

and grants the channel's role what it needs, ``INSERT`` (a conflict target would
also need ``SELECT`` on its column; the statement names none)::

    GRANT INSERT ON "signoff_pending_approvals" TO signoff_notifier;

The name is quoted, as in every statement the channel sends, so its case counts.

Each send opens one short-lived connection and closes it: the notifier runs on
Lambda, where a pooled connection would outlive its frozen sandbox and every
concurrent sandbox would hold its own (put RDS Proxy or PgBouncer in front of a
busy database). Failures: the server could not be reached, shut down or timed
out (``OperationalError``) → retryable ``SendFailed``; it refused the credentials
or database, the table is missing, or the role may not insert → permanent.

``psycopg`` (the ``signoff[database]`` extra) is imported only by this module's
functions, so the engine layer runs without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from signoff.channels.base import Delivery

# The row is shared with the Redis channel; re-exported for readers of the table.
from signoff.channels.database.rows import (
    ApprovalScope,
    PendingApprovalRow,
    approval_row,
    require_extra,
)
from signoff.channels.settings.database import DEFAULT_TABLE, validate_table
from signoff.errors import SendFailed

if TYPE_CHECKING:
    import psycopg

    from signoff.channels.build import BuildContext
    from signoff.channels.database.repository import PendingApprovalsRepository
    from signoff.channels.notification import Notification
    from signoff.channels.settings.database import DatabaseSettings
    from signoff.clock import Clock

__all__ = [
    "DEFAULT_TABLE",
    "ApprovalScope",
    "DatabaseChannel",
    "PendingApprovalRow",
    "PostgresPendingApprovals",
    "create_table_sql",
    "validate_table",
]


def create_table_sql(table: str = DEFAULT_TABLE) -> str:
    """The ``CREATE TABLE`` an operator runs once, before the channel's first send.

    Raises:
        ValueError: ``table`` is not a table name.
    """
    return (
        f"CREATE TABLE IF NOT EXISTS {quoted_table(table)} (\n"
        "    pending_id      text PRIMARY KEY,\n"
        "    tool            text NOT NULL,\n"
        "    args            jsonb NOT NULL,\n"
        "    scope           jsonb NOT NULL,\n"
        "    reason          text NOT NULL,\n"
        "    requested_at    timestamptz NOT NULL,\n"
        "    idempotency_key text NOT NULL UNIQUE\n"
        ");"
    )


def quoted_table(table: str) -> str:
    """``table`` (``name`` or ``schema.name``) quoted for a SQL statement.

    Raises:
        ValueError: ``table`` is not a table name.
    """
    # The same quoting psycopg.sql.Identifier applies; the name holds no quote to escape.
    return ".".join(f'"{part}"' for part in validate_table(table).split("."))


class PostgresPendingApprovals:
    """The repository over one PostgreSQL table, written with psycopg 3."""

    def __init__(
        self,
        dsn: str,
        table: str = DEFAULT_TABLE,
        *,
        connect_timeout: int = 5,
        statement_timeout: int = 5,
    ) -> None:
        """The table ``table`` of the database ``dsn`` names (its password included).

        Raises:
            ValueError: ``table`` is not a table name.
        """
        self.table = validate_table(table)
        self._dsn = dsn  # holds the password: kept out of repr and of error messages
        self._connect_timeout = connect_timeout
        self._statement_timeout = statement_timeout

    def __repr__(self) -> str:
        return f"PostgresPendingApprovals(table={self.table!r})"

    @property
    def location(self) -> str:
        return self.table

    def insert_once(self, row: PendingApprovalRow, idempotency_key: str) -> bool:
        """Insert the row unless its pending id is there.

        Raises:
            SendFailed: retryable when the server could not be reached or timed out,
                permanent when it refused the credentials, the table or the insert.
        """
        import psycopg
        from psycopg import sql
        from psycopg.types.json import Jsonb

        statement = sql.SQL(
            "INSERT INTO {table}"
            " (pending_id, tool, args, scope, reason, requested_at, idempotency_key)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)"
            # No conflict target: every unique column is an arbiter (module docstring).
            " ON CONFLICT DO NOTHING"
        ).format(table=sql.Identifier(*self.table.split(".")))
        values = (
            row.pending_id,
            row.tool,
            Jsonb(row.args),
            Jsonb(row.scope.model_dump(mode="json")),
            row.reason,
            row.requested_at,
            idempotency_key,
        )
        try:
            connection = psycopg.connect(
                self._dsn,
                autocommit=True,
                connect_timeout=self._connect_timeout,
                # A locked or overloaded table must not hold the Lambda until its own timeout.
                options=f"-c statement_timeout={self._statement_timeout * 1000}",
            )
        except psycopg.Error as exc:
            raise _failed(exc, retryable=_connect_retryable(exc)) from exc
        try:
            with connection:
                return connection.execute(statement, values).rowcount == 1
        except psycopg.Error as exc:
            # Connected, only the operational class (lost connection, shutdown,
            # statement timeout, lock or resource limits) can pass on a retry.
            raise _failed(exc, retryable=isinstance(exc, psycopg.OperationalError)) from exc


class DatabaseChannel:
    """Stores a ``PendingApprovalRow`` through a repository; approval-only."""

    def __init__(
        self,
        name: str,
        repository: PendingApprovalsRepository,
        *,
        clock: Clock,
        environment: str | None = None,
    ) -> None:
        """``environment`` is the deployment's, for the row's scope; ``clock`` dates
        only a notification that carries no ``requested_at``."""
        self.name = name
        self.repository = repository
        self.environment = environment
        self._clock = clock

    def __repr__(self) -> str:
        return f"DatabaseChannel(name={self.name!r}, repository={self.repository!r})"

    @classmethod
    def from_config(
        cls,
        settings: DatabaseSettings,
        context: BuildContext,
        *,
        name: str = "database",
    ) -> Self:
        """The channel ``name`` over PostgreSQL, its DSN read from ``secrets`` now.

        Raises:
            SecretMissing: the DSN secret does not exist.
            StoreUnavailable: the secret source failed transiently.
        """
        require_extra("psycopg", channel="database", extra="database")
        repository = PostgresPendingApprovals(
            context.secrets.get(settings.dsn.secret),
            settings.table,
            connect_timeout=settings.connect_timeout_seconds,
            statement_timeout=settings.statement_timeout_seconds,
        )
        return cls(name, repository, clock=context.clock, environment=context.environment)

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Store the approval's row once; other kinds are accepted and do nothing.

        ``previous`` is not needed: the repository makes a repeated insert a no-op.

        Raises:
            SendFailed: the repository's, under this channel's name.
        """
        row = approval_row(
            notification, channel=self.name, environment=self.environment, clock=self._clock
        )
        if row is None:
            return Delivery()
        try:
            self.repository.insert_once(row, idempotency_key)
        except SendFailed as exc:
            if exc.channel == self.name:
                raise
            raise SendFailed(
                self.name, exc.reason, retryable=exc.retryable, retry_after=exc.retry_after
            ) from exc
        return Delivery(receipt={"table": self.repository.location})


def _failed(exc: psycopg.Error, *, retryable: bool) -> SendFailed:
    # psycopg's messages name the host, port, user and database, never the password;
    # libpq's span lines, and a reason is logged as one.
    reason = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    # The channel puts its own name on it (PendingApprovalsRepository's contract).
    return SendFailed("database", reason, retryable=retryable)


def _connect_retryable(exc: psycopg.Error) -> bool:
    """Whether a failed connection attempt can pass later with the same settings."""
    import psycopg

    if isinstance(exc, psycopg.ProgrammingError):
        return False  # a malformed DSN
    # libpq gives connection errors no SQLSTATE. A server that got as far as the
    # password exchange was reached and then refused: a wrong password, an unknown
    # role or database, which fail again. A refused or timed-out socket and "the
    # database system is starting up" come before that exchange.
    pgconn = exc.pgconn
    return not (pgconn is not None and (pgconn.used_password or pgconn.needs_password))
