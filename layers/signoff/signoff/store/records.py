"""What every stored record shares, and the two kinds that need nothing else: audit
entries and API keys.

Each kind lives in the module of what it is about, so a path imports only the
records it reads: ``signoff.store.pending_records`` (pending items, their votes
and outbox rows), ``signoff.store.session_records`` (sessions, their log and a
turn's commit, with the engine's state and messages behind them). Times are
epoch seconds (floats) so conditions compare numbers in every adapter.
"""

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ApiKey", "AuditEntry", "Record"]


class Record(BaseModel):
    """A record the store keeps as one item (``signoff.store.codec``)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    # The item's ``kind`` attribute: which record it holds (a turn's ``Commit``,
    # never stored whole, has none); ``signoff.store.keys.is_session`` asks it.
    item_kind: ClassVar[str] = ""


class AuditEntry(Record):
    """One decision: by a rule, by a human (with channel), or by expiry; or one
    person's vote on an item that needs several (``vote``: its decision is the
    vote's, ``approve`` or ``deny``; the vote that reaches the quorum is the
    ``human`` entry that resolves the item, naming every voter)."""

    item_kind: ClassVar[str] = "audit"

    id: str
    subject: str  # the session id
    at: float
    kind: Literal["rule", "human", "expiry", "escalation", "refusal", "vote"]
    decision: str
    actor: str
    channel: str | None = None
    pending_id: str | None = None
    tool: str | None = None
    reason: str = ""
    # Whose item it was: the approvals inbox lists a tenant's entries by time
    # (``signoff.approvals.inbox``); None on a rule's decisions, which it does not list.
    tenant: str | None = None
    agent: str | None = None


class ApiKey(Record):
    """An API key as the store keeps it: the hash of its secret, never the secret itself."""

    item_kind: ClassVar[str] = "api_key"

    key_id: str = Field(min_length=1)  # public: named in listings and in revocations
    tenant: str = Field(min_length=1)
    # sha256 hex of the clear key; the pattern refuses a clear key stored by mistake
    key_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    created_at: float
    revoked_at: float | None = None
    label: str = ""
