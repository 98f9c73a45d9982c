"""Sessions and their logs in DynamoDB: the lease as condition expressions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from signoff.errors import LeaseLost
from signoff.store import codec, rules
from signoff.store.codec import visible
from signoff.store.dynamodb.table import Condition, ConditionFailed, TransactionRefused, all_of
from signoff.store.records import LogChunk, SessionRecord

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.base import ClaimFor
    from signoff.store.codec import Codec, Item
    from signoff.store.dynamodb.table import DynamoTable
    from signoff.store.records import Commit

__all__ = ["DynamoSessions"]

# The parts of ``rules.claimable`` as DynamoDB conditions.
# the session exists for readers: written, and its retention has not passed
EXISTS: Final = "attribute_exists(#pk) AND (attribute_not_exists(#ttl) OR #ttl > :now)"
# nobody else holds a live lease: none at all, run out, or already ours
LEASE_FREE: Final = (
    "attribute_not_exists(#lease_owner) OR #lease_until <= :now OR #lease_owner = :owner"
)
# a message runs only between turns
BETWEEN_TURNS: Final = "#status IN (:idle, :done)"
# a resume continues exactly the pause it resolves
WAITS_ON_IT: Final = "#status = :paused AND #pending_id = :pending_id"
# a redrive picks up a turn whose holder stopped renewing its lease
RUNNING: Final = "#status = :running"
# nothing to continue: never written, or its retention passed
ABSENT: Final = "attribute_not_exists(#pk) OR #ttl <= :now"
# the lease is still ours (nobody took it over after it ran out)
OWNED: Final = "#lease_owner = :owner"

_WANTED: Final[dict[ClaimFor, str]] = {
    "message": BETWEEN_TURNS,
    "resume": WAITS_ON_IT,
    "redrive": RUNNING,
}


def _claim_values(
    purpose: ClaimFor, owner: str, now: float, pending_id: str | None
) -> dict[str, Any]:
    values: dict[str, Any] = {":now": now, ":owner": owner}
    # DynamoDB refuses values the expression does not use, so each purpose adds its own.
    if purpose == "message":
        values |= {":idle": "idle", ":done": "done"}
    elif purpose == "resume":
        values |= {":paused": "paused", ":pending_id": pending_id}
    else:
        values[":running"] = "running"
    return values


class DynamoSessions:
    """Sessions and their append-only logs."""

    def __init__(self, table: DynamoTable, coder: Codec) -> None:
        self._table = table
        self._codec = coder

    def _current(self, item: Item | None, now: float) -> SessionRecord | None:
        if item is None or not visible(item, now):
            return None
        return self._codec.decode(item, SessionRecord)

    def load(self, session_id: str) -> SessionRecord | None:
        """The session, or None (also when its retention has passed)."""
        item = self._table.get(codec.session_key(session_id))
        return self._current(item, self._table.now())

    def claim(
        self,
        fresh: SessionRecord,
        *,
        purpose: ClaimFor,
        owner: str,
        until: float,
        now: float,
        pending_id: str | None = None,
    ) -> SessionRecord:
        """Take the session's lease; ``fresh`` is stored when the session is new.

        One conditional update per existing session; a message to a session that
        does not exist falls through to one conditional put of ``fresh``.
        """
        attrs = rules.claim_attrs(
            session_id=fresh.session_id, purpose=purpose, owner=owner, until=until, now=now
        )
        condition = Condition(
            expression=all_of(EXISTS, _WANTED[purpose], LEASE_FREE),
            values=_claim_values(purpose, owner, now, pending_id),
        )
        key = codec.session_key(fresh.session_id)
        try:
            claimed = self._table.update(key, set_attrs=attrs, condition=condition)
            return self._codec.decode(claimed, SessionRecord)
        except ConditionFailed as failed:
            current = self._current(failed.item, now)
            if purpose != "message" or current is not None:
                raise rules.claim_refusal(fresh.session_id, current) from failed
        created = self._codec.encode(fresh) | attrs
        try:
            self._table.put(created, condition=Condition(expression=ABSENT, values={":now": now}))
        except ConditionFailed as raced:
            # another message created the session between our two writes
            current = self._current(raced.item, now)
            raise rules.claim_refusal(fresh.session_id, current) from raced
        return self._codec.decode(created, SessionRecord)

    def commit(self, commit: Commit, *, owner: str) -> None:
        """Write ``commit`` atomically, if ``owner`` still holds the lease.

        Raises:
            LeaseLost: another owner holds the lease now, or wrote this step already.
        """
        session = rules.committed_session(commit, owner)
        now = self._table.now()
        fresh = Condition(expression=ABSENT, values={":now": now})
        writes: list[tuple[Item, Condition | None]] = [
            (self._codec.encode(session), Condition(expression=OWNED, values={":owner": owner}))
        ]
        writes += [
            (self._codec.encode(record), fresh)
            for record in (commit.chunk, commit.pending)
            if record is not None
        ]
        writes += [(self._codec.encode(row), None) for row in commit.outbox]
        writes += [(self._codec.encode(entry), None) for entry in commit.audit]
        try:
            self._table.transact(writes)
        except TransactionRefused as refused:
            raise LeaseLost(session.session_id) from refused

    def stalled(self, before: float, *, limit: int = 100) -> list[SessionRecord]:
        """Running sessions whose lease ran out by ``before``, longest stalled first."""
        partition, upper = codec.stalled_before(before)
        found: list[SessionRecord] = []
        if limit <= 0:
            return found
        pages = self._table.query(
            "#gsi3pk = :partition AND #gsi3sk < :upper",
            {":partition": partition, ":upper": upper},
            index=codec.LEASE_INDEX,
            limit=limit,
        )
        for page in pages:
            for item in page:
                record = self._current(item, self._table.now())
                # the index is eventually consistent: recheck what it returned
                if record and rules.stalled(record, before):
                    found.append(record)
                if len(found) == limit:
                    return found
        return found

    def read_log(self, session_id: str, *, from_seq: int = 0) -> Iterator[LogChunk]:
        """The session's log chunks from ``from_seq`` on, in order, paging as it goes."""
        pk, low, high = codec.chunk_range(session_id, from_seq)
        pages = self._table.query(
            "#pk = :pk AND #sk BETWEEN :low AND :high",
            {":pk": pk, ":low": low, ":high": high},
        )
        for page in pages:
            now = self._table.now()
            yield from (self._codec.decode(item, LogChunk) for item in page if visible(item, now))
