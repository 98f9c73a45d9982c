"""The pending-approvals repository through any DB-API 2.0 driver (PEP 249).

For a database the deployment already reaches through its own driver — SQLite,
PostgreSQL through psycopg or another driver — without this package knowing it::

    import sqlite3
    from signoff.channels.database.channel import DatabaseChannel
    from signoff.channels.database.dbapi import DbApiPendingApprovals

    repository = DbApiPendingApprovals(lambda: sqlite3.connect("approvals.db"), driver=sqlite3)
    channel = DatabaseChannel("dashboard", repository, clock=clock)

(a ``type: python`` channel in ``channels.yaml`` builds it this way). The table is
the one ``create_table_sql`` makes, and the insert is the same statement as the
PostgreSQL adapter's, ``INSERT … ON CONFLICT DO NOTHING``: any
database whose SQL has that clause (PostgreSQL, SQLite 3.24+) keeps one row per
pending item. ``args`` and ``scope`` are sent as JSON text and ``requested_at`` as
RFC 3339 text, which PostgreSQL casts into ``jsonb`` / ``timestamptz`` and SQLite
stores as they are.

Each insert opens a connection from ``connect``, commits and closes it (the
notifier runs on Lambda: see ``signoff.channels.database.channel``). A failure is the
driver's ``OperationalError`` (lost or refused connection, a timeout, a locked
database) → retryable; any other driver error → permanent, unless ``retryable``
says otherwise: drivers class their errors differently (SQLite reports a missing
table as an ``OperationalError``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from signoff.channels.database.channel import quoted_table
from signoff.channels.settings.database import DEFAULT_TABLE, validate_table
from signoff.clock import iso
from signoff.errors import SendFailed

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from signoff.channels.database.rows import PendingApprovalRow

__all__ = ["DbApiPendingApprovals"]

_COLUMNS = ("pending_id", "tool", "args", "scope", "reason", "requested_at", "idempotency_key")

# PEP 249's five parameter styles, for the seven values in _COLUMNS' order.
_MARKERS: dict[str, Callable[[int, str], str]] = {
    "qmark": lambda _i, _name: "?",
    "numeric": lambda i, _name: f":{i + 1}",
    "named": lambda _i, name: f":{name}",
    "format": lambda _i, _name: "%s",
    "pyformat": lambda _i, name: f"%({name})s",
}


class DbApiPendingApprovals:
    """The repository over one table, reached through a DB-API 2.0 connection factory."""

    def __init__(
        self,
        connect: Callable[[], Any],
        table: str = DEFAULT_TABLE,
        *,
        driver: ModuleType,
        retryable: Callable[[Exception], bool] | None = None,
    ) -> None:
        """``connect`` returns a new connection of ``driver`` (the DB-API module).

        Raises:
            ValueError: ``table`` is not a table name, or ``driver`` has no known paramstyle.
        """
        self.table = validate_table(table)
        style = getattr(driver, "paramstyle", None)
        if style not in _MARKERS:
            raise ValueError(f"driver {driver.__name__} has no DB-API paramstyle: {style!r}")
        self._connect = connect  # may close over a password: kept out of repr
        self._driver = driver
        self._named = style in ("named", "pyformat")
        self._retryable = retryable or (lambda exc: isinstance(exc, driver.OperationalError))
        markers = ", ".join(_MARKERS[style](i, name) for i, name in enumerate(_COLUMNS))
        # The table is a validated identifier, quoted; every value is a bound parameter.
        self._statement = (
            f"INSERT INTO {quoted_table(self.table)} ({', '.join(_COLUMNS)})"  # noqa: S608
            f" VALUES ({markers})"
            " ON CONFLICT DO NOTHING"
        )

    def __repr__(self) -> str:
        return f"DbApiPendingApprovals(driver={self._driver.__name__!r}, table={self.table!r})"

    @property
    def location(self) -> str:
        return self.table

    def insert_once(self, row: PendingApprovalRow, idempotency_key: str) -> bool:
        """Insert the row unless its pending id is there, and commit.

        Raises:
            SendFailed: retryable for the driver's ``OperationalError`` (or what
                ``retryable`` accepts), permanent for its other errors.
        """
        values = (
            row.pending_id,
            row.tool,
            json.dumps(row.args, ensure_ascii=False, sort_keys=True),
            json.dumps(row.scope.model_dump(mode="json"), sort_keys=True),
            row.reason,
            iso(row.requested_at),
            idempotency_key,
        )
        parameters: Any = dict(zip(_COLUMNS, values, strict=True)) if self._named else values
        try:
            connection = self._connect()
            try:
                cursor = connection.cursor()
                cursor.execute(self._statement, parameters)
                stored = bool(cursor.rowcount == 1)
                connection.commit()
            finally:
                connection.close()
        except self._driver.Error as exc:
            # A driver's message names the server and the table, not a password.
            reason = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
            raise SendFailed("database", reason, retryable=self._retryable(exc)) from exc
        return stored
