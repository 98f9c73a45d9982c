"""A transaction DynamoDB cancels for a conflict is an answer, not an outage.

DynamoDB cancels a ``TransactWriteItems`` whose item another request is writing
(``TransactionCanceledException``, reason ``TransactionConflict``); nothing is
written and botocore does not retry it. ``DynamoTable.transact`` tries it again
a few times, with jitter, then raises ``TransactionConflicted``; the pending
items port answers that from the item as it is now: the winner's decision
(``AlreadyResolved``), a vote to read again, or a 409 to decide again — never
``StoreUnavailable`` (a 503) for a person whose click lost a race.

The client here is a fake with DynamoDB's own error shapes: it answers the
transactions from a script and ``GetItem`` from the items it is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest
from botocore.exceptions import ClientError

from signoff.api.errors import status_of
from signoff.durable.votes import cast as cast_vote
from signoff.errors import (
    AlreadyResolved,
    ResolutionError,
    StoreUnavailable,
    TransactionConflicted,
)
from signoff.gate.policy import ApprovalPolicy
from signoff.ids import new_id
from signoff.store import keys
from signoff.store.codec import Codec
from signoff.store.dynamodb.table import CONFLICT_TRIES, DynamoTable, dump
from signoff.store.pending import TablePendingItems
from signoff.store.pending_records import PendingItem, Ruling, Vote
from signoff.store.records import AuditEntry
from signoff.store.table import ConditionFailed, Put
from tests.support.builders import T0, pending_approval

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

    from signoff.store.pending_records import PendingStatus

NOW = T0 + 60
CODER = Codec(None)


def cancelled(*codes: str, item: dict[str, Any] | None = None) -> ClientError:
    """The error botocore raises for a cancelled transaction, one reason per write."""
    reasons: list[dict[str, Any]] = []
    for code in codes:
        reason: dict[str, Any] = {"Code": code}
        if code == "TransactionConflict":
            reason["Message"] = "Transaction is ongoing for the item"
        if code == "ConditionalCheckFailed":
            reason["Message"] = "The conditional request failed"
            if item is not None:
                reason["Item"] = item
        reasons.append(reason)
    message = (
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        f"[{', '.join(codes)}]"
    )
    response: Any = {
        "Error": {"Code": "TransactionCanceledException", "Message": message},
        "CancellationReasons": reasons,
        "ResponseMetadata": {"HTTPStatusCode": 400},
    }
    return ClientError(response, "TransactWriteItems")


class FakeDynamoDB:
    """``transact_write_items`` answered from ``script`` (None: it succeeds; past its
    end, ``then``), ``get_item`` from ``items``; every transaction sent is kept."""

    def __init__(
        self,
        script: list[ClientError | None],
        *,
        then: ClientError | None = None,
        items: Sequence[PendingItem] = (),
    ) -> None:
        self.script = list(script)
        self.then = then
        self.items = {keys.pending_key(item.id): dump(CODER.encode(item)) for item in items}
        self.sent: list[list[dict[str, Any]]] = []

    def transact_write_items(self, *, TransactItems: list[dict[str, Any]]) -> dict[str, Any]:
        self.sent.append(TransactItems)
        answer = self.script.pop(0) if self.script else self.then
        if answer is not None:
            raise answer
        return {}

    def get_item(self, *, TableName: str, Key: dict[str, Any], ConsistentRead: bool) -> Any:
        assert ConsistentRead, "the answer to a conflict is read strongly consistent"
        found = self.items.get((Key["pk"]["S"], Key["sk"]["S"]))
        return {} if found is None else {"Item": found}


def table(client: FakeDynamoDB) -> DynamoTable:
    return DynamoTable(cast("Any", client), "signoff-test")


def pending(client: FakeDynamoDB) -> TablePendingItems:
    return TablePendingItems(table(client), CODER, now=lambda: NOW)


def writes() -> list[Put]:
    # what a decision writes: the item, and its audit entry
    return [Put({"pk": "P#p1", "sk": "META", "args": "secret-order-A-17"}), Put({"pk": "A#1"})]


CONFLICT = cancelled("TransactionConflict", "None")


@pytest.mark.parametrize("conflicts", [1, CONFLICT_TRIES - 1])
def test_a_transaction_cancelled_for_a_conflict_is_tried_again_until_it_succeeds(
    conflicts: int,
) -> None:
    client = FakeDynamoDB([CONFLICT] * conflicts + [None])

    table(client).transact(writes())

    assert len(client.sent) == conflicts + 1
    # the same request each time: nothing of it was written before
    assert all(sent == client.sent[0] for sent in client.sent)


def test_a_transaction_that_always_conflicts_is_tried_a_few_times_then_conflicted() -> None:
    client = FakeDynamoDB([], then=CONFLICT)

    with pytest.raises(TransactionConflicted) as raised:
        table(client).transact(writes())

    assert len(client.sent) == CONFLICT_TRIES
    # a store error to every caller that does not answer it itself, and nothing secret
    assert isinstance(raised.value, StoreUnavailable)
    assert "secret" not in str(raised.value)


def test_a_refused_condition_beside_a_conflict_is_the_answer_at_once() -> None:
    seen = {"pk": {"S": "P#p1"}, "sk": {"S": "META"}, "status": {"S": "approved"}}
    client = FakeDynamoDB([cancelled("ConditionalCheckFailed", "TransactionConflict", item=seen)])

    with pytest.raises(ConditionFailed) as raised:
        table(client).transact(writes())

    assert len(client.sent) == 1
    assert raised.value.write == 0
    assert raised.value.item is not None and raised.value.item["status"] == "approved"


def test_a_transaction_cancelled_for_another_reason_is_not_tried_again() -> None:
    client = FakeDynamoDB([cancelled("ThrottlingError", "None")])

    with pytest.raises(StoreUnavailable) as raised:
        table(client).transact(writes())

    assert not isinstance(raised.value, TransactionConflicted)
    assert len(client.sent) == 1


def entry(kind: Literal["human", "vote"], decision: str) -> AuditEntry:
    return AuditEntry(id=new_id(), subject="s1", at=NOW, kind=kind, decision=decision, actor="bob")


def resolve(port: TablePendingItems, status: PendingStatus = "approved") -> PendingItem:
    audit = entry("human", status)
    ruling = Ruling(status=status, actor="bob", channel="slack", now=NOW)
    return port.resolve("p1", ruling, audit=audit)


def test_a_resolution_that_lost_to_another_is_answered_with_the_winner() -> None:
    winner = pending_approval(
        status="denied", resolved_by="alice", resolved_via="email", resolved_at=NOW - 1
    )
    client = FakeDynamoDB([], then=CONFLICT, items=[winner])

    with pytest.raises(AlreadyResolved) as raised:
        resolve(pending(client))

    current = raised.value.current
    assert (current.status, current.resolved_by) == ("denied", "alice")
    assert status_of(raised.value) == (409, "already_resolved")
    # the first answer was the winner's: the transaction is not tried again
    assert len(client.sent) == CONFLICT_TRIES


def test_a_resolution_whose_item_still_waits_is_tried_once_more_then_a_409() -> None:
    client = FakeDynamoDB([], then=CONFLICT, items=[pending_approval()])

    with pytest.raises(ResolutionError) as raised:
        resolve(pending(client))

    assert status_of(raised.value) == (409, "conflict")
    assert "decide again" in str(raised.value)
    assert len(client.sent) == 2 * CONFLICT_TRIES


def test_a_resolution_that_conflicted_with_a_reminder_succeeds_the_second_time() -> None:
    # the first transaction lost every try (a reminder, say, kept the item busy)
    client = FakeDynamoDB([CONFLICT] * CONFLICT_TRIES + [None], items=[pending_approval()])

    resolve(pending(client))

    assert len(client.sent) == CONFLICT_TRIES + 1


POLICY = ApprovalPolicy(approvals=3, deny_quorum=1, rule="big-refunds")


def vote(person: str) -> Vote:
    return Vote(person=person, actor=f"U-{person}", channel="slack", at=NOW, decision="approve")


def test_a_vote_that_lost_to_another_vote_is_read_again() -> None:
    item = pending_approval(policy=POLICY)
    # the item as the other voter's write left it
    voted = item.model_copy(update={"votes": [vote("alice")], "vote_count": 1})
    client = FakeDynamoDB([], then=CONFLICT, items=[voted])

    written = pending(client).vote(item, vote("bob"), audit=entry("vote", "approve"))

    assert written is None  # the voter reads the votes again and decides anew
    assert len(client.sent) == CONFLICT_TRIES


def test_a_voter_who_keeps_losing_to_other_voters_recasts_on_what_they_wrote() -> None:
    item = pending_approval(policy=POLICY)
    voted = item.model_copy(update={"votes": [vote("alice")], "vote_count": 1})
    # bob's first vote conflicts with alice's; his second, on her vote, is written
    client = FakeDynamoDB([CONFLICT] * CONFLICT_TRIES + [None], items=[voted])

    written = cast_vote(pending(client), item, vote("bob"), retention=3600)

    assert [v.person for v in written.votes] == ["alice", "bob"]
    assert written.status == "pending"
    assert len(client.sent) == CONFLICT_TRIES + 1


def test_a_vote_on_an_item_nobody_changed_is_a_409_after_two_rounds() -> None:
    item = pending_approval(policy=POLICY)
    client = FakeDynamoDB([], then=CONFLICT, items=[item])

    with pytest.raises(ResolutionError) as raised:
        pending(client).vote(item, vote("bob"), audit=entry("vote", "approve"))

    assert status_of(raised.value)[0] == 409
    assert len(client.sent) == 2 * CONFLICT_TRIES
