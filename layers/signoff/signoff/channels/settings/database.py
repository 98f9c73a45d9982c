"""A PostgreSQL table channel's settings (``type: database``)."""

import re
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, Field

from signoff.channels.config import ChannelSettings, Secret

__all__ = ["DEFAULT_TABLE", "DatabaseSettings", "validate_table"]

DEFAULT_TABLE: Final = "signoff_pending_approvals"
# A table name is spliced into SQL (quoted, by psycopg.sql.Identifier): only a plain
# identifier, optionally schema-qualified, gets that far.
_TABLE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?")


def validate_table(table: str) -> str:
    """``table`` if it is a plain identifier, optionally ``schema.table``.

    Raises:
        ValueError: anything else.
    """
    if not _TABLE.fullmatch(table):
        raise ValueError(
            f"{table!r} is not a table name: letters, digits and '_', optionally schema.table"
        )
    return table


class DatabaseSettings(ChannelSettings):
    """A pending-approval row inserted into a PostgreSQL table (approvals only).

    ``dsn`` names the secret holding the libpq DSN (``postgresql://user:pass@host/db``).
    """

    type: Literal["database"]
    dsn: Secret
    table: Annotated[str, AfterValidator(validate_table)] = DEFAULT_TABLE
    connect_timeout_seconds: int = Field(default=5, ge=1)
    statement_timeout_seconds: int = Field(default=5, ge=1)
