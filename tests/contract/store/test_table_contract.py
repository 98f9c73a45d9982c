"""Contract of the ``Table`` primitive: ``MemoryTable`` and ``DynamoTable`` (on moto) alike.

The store's rules are condition values that ``DynamoTable`` renders to
DynamoDB expressions and ``MemoryTable`` evaluates in Python; the cases below
pin both to one answer per (item, condition), so a rule cannot mean one thing
in memory and another on DynamoDB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
import pytest

from signoff.store import keys, rules
from signoff.store.dynamodb.table import DynamoTable
from signoff.store.memory import MemoryTable
from signoff.store.table import Attr, ConditionFailed, Put, Update

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.store.table import Condition, Item, Table

PAGE_SIZE = 3
KEY = ("P#p1", "META")


@pytest.fixture(params=["memory", "dynamodb"])
def table(request: pytest.FixtureRequest) -> Table:
    if request.param == "memory":
        return MemoryTable(page_size=PAGE_SIZE)
    resources = request.getfixturevalue("aws")
    client = boto3.client("dynamodb")
    return DynamoTable(client, resources.tables["SignoffTable"], page_size=PAGE_SIZE)


def attempt(write: Callable[[], object]) -> ConditionFailed | None:
    """The refusal of ``write``, or None when the table applied it."""
    try:
        write()
    except ConditionFailed as failed:
        return failed
    return None


def item(**attrs: Any) -> Item:
    return {"pk": KEY[0], "sk": KEY[1], **attrs}


STORED = item(status="pending", expires_at=100.5, reminders=2, failed=False, owner="alice")

# (condition, whether it holds for STORED): DynamoDB's answers, which memory must give too.
# Not listed: a string ordered against a number, a bool against a number — moto answers
# those unlike DynamoDB (it raises, or says False == 0), and no rule compares across types.
CASES: list[tuple[str, Condition, bool]] = [
    ("exists", Attr("status").exists(), True),
    ("missing", Attr("lock_owner").missing(), True),
    ("equal string", Attr("status").eq("pending"), True),
    ("unequal string", Attr("status").eq("approved"), False),
    ("a missing attribute compares false", Attr("lock_owner").eq("alice"), False),
    ("a missing attribute is not below anything", Attr("lock_until").le(1e12), False),
    ("number below", Attr("expires_at").lt(101), True),
    ("number not above", Attr("expires_at").gt(100.5), False),
    ("number at most", Attr("expires_at").le(100.5), True),
    ("int equals", Attr("reminders").eq(2), True),
    ("a number never equals a string", Attr("reminders").eq("2"), False),
    ("bool equals", Attr("failed").eq(False), True),
    ("one of", Attr("status").one_of("idle", "pending"), True),
    ("none of", Attr("status").one_of("idle", "done"), False),
    ("between", Attr("owner").between("a", "b"), True),
    ("begins with", Attr("owner").begins_with("ali"), True),
    ("does not begin with", Attr("owner").begins_with("bob"), False),
    ("and", Attr("status").eq("pending") & Attr("reminders").eq(2), True),
    ("and, one part failing", Attr("status").eq("pending") & Attr("reminders").eq(3), False),
    ("or", Attr("lock_owner").eq("x") | Attr("lock_owner").missing(), True),
    ("live without ttl", rules.live(50.0), True),
    ("not absent", rules.absent(50.0), False),
    ("waiting", rules.waiting(100.0), True),
    ("not due", rules.due(100.0), False),
    ("due", rules.due(100.5), True),
    ("first reminder already sent", rules.remindable(0, 50.0), False),
    ("third reminder", rules.remindable(2, 50.0), True),
]


@pytest.mark.parametrize(("name", "condition", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_condition_holds_for_an_item_exactly_when_the_table_applies_a_write(
    table: Table, name: str, condition: Condition, expected: bool
) -> None:
    table.put(STORED)

    refused = attempt(lambda: table.update(Update(KEY, {"touched": True}, condition=condition)))

    assert condition.holds(STORED) is expected
    assert (refused is None) is expected, name
    # a refusal returns the item as it was; a write that went through changed it
    assert refused is None or refused.item == STORED
    assert table.get(KEY) == (STORED | {"touched": True} if expected else STORED)


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (Attr("pk").missing(), True),
        (Attr("pk").exists(), False),
        (Attr("status").eq("pending"), False),
        (rules.absent(50.0), True),
        (rules.live(50.0), False),
    ],
)
def test_on_a_missing_item_every_attribute_is_missing(
    table: Table, condition: Condition, expected: bool
) -> None:
    refused = attempt(lambda: table.put(item(status="new"), condition=condition))

    assert condition.holds(None) is expected
    assert (refused is None) is expected
    assert refused is None or refused.item is None
    assert table.get(KEY) == (item(status="new") if expected else None)


def test_an_item_past_its_ttl_is_still_stored_but_neither_live_nor_taken(table: Table) -> None:
    table.put(item(ttl=100))

    assert table.get(KEY) == item(ttl=100)
    assert not rules.live(100.0).holds(table.get(KEY))
    table.put(item(status="again"), condition=rules.absent(100.0))
    assert table.get(KEY) == item(status="again")


def test_a_refused_put_returns_the_current_item_and_writes_nothing(table: Table) -> None:
    table.put(item(status="approved"))

    with pytest.raises(ConditionFailed) as refused:
        table.put(item(status="denied"), condition=rules.PENDING)

    assert refused.value.item == item(status="approved")
    assert refused.value.write == 0
    assert table.get(KEY) == item(status="approved")


def test_an_update_sets_and_removes_and_returns_the_item_afterwards(table: Table) -> None:
    table.put(item(status="pending", gsi1pk="PENDING", gsi1sk="x", note="n"))

    after = table.update(
        Update(KEY, {"status": "approved", "at": 1.25}, ("gsi1pk", "gsi1sk"), rules.PENDING)
    )

    assert after == item(status="approved", at=1.25, note="n")
    assert table.get(KEY) == after
    assert table.update(Update(KEY, remove=("note",))) == item(status="approved", at=1.25)


def test_numbers_read_back_as_written(table: Table) -> None:
    written = item(whole=3, fraction=1767225600.123456, big=10**15, flag=True, nested={"a": "b"})

    table.put(written)

    stored = table.get(KEY)
    assert stored == written
    assert stored is not None and isinstance(stored["whole"], int)


def test_a_transaction_writes_everything_or_nothing(table: Table) -> None:
    table.put({"pk": "A", "sk": "1", "v": 1})
    table.put({"pk": "B", "sk": "1", "v": 1})

    with pytest.raises(ConditionFailed) as refused:
        table.transact(
            [
                Update(("A", "1"), {"v": 2}, condition=Attr("v").eq(1)),
                Put({"pk": "C", "sk": "1"}, Attr("pk").missing()),
                Put({"pk": "B", "sk": "1", "v": 2}, Attr("pk").missing()),
            ]
        )

    # the refused write is named, with the item its condition saw
    assert (refused.value.write, refused.value.item) == (2, {"pk": "B", "sk": "1", "v": 1})
    assert table.get(("A", "1")) == {"pk": "A", "sk": "1", "v": 1}
    assert table.get(("C", "1")) is None

    table.transact(
        [
            Update(("A", "1"), {"v": 2}, condition=Attr("v").eq(1)),
            Put({"pk": "C", "sk": "1"}, Attr("pk").missing()),
        ]
    )
    assert table.get(("A", "1")) == {"pk": "A", "sk": "1", "v": 2}
    assert table.get(("C", "1")) == {"pk": "C", "sk": "1"}


def test_a_query_pages_one_partition_in_sort_key_order(table: Table) -> None:
    for sort in ["L#5", "L#1", "L#4", "M", "L#2", "L#3", "K"]:
        table.put({"pk": "S#s1", "sk": sort})
    table.put({"pk": "S#s2", "sk": "L#1"})

    pages = list(table.query("S#s1", Attr("sk").begins_with("L#"), index=keys.TABLE_KEY))
    every = list(table.query("S#s1", index=keys.TABLE_KEY))
    ranged = table.query("S#s1", Attr("sk").between("L#2", "L#4"), index=keys.TABLE_KEY)

    assert [[row["sk"] for row in page] for page in pages] == [
        ["L#1", "L#2", "L#3"], ["L#4", "L#5"]
    ]  # fmt: skip
    assert [row["sk"] for page in every for row in page] == [
        "K", "L#1", "L#2", "L#3", "L#4", "L#5", "M"
    ]  # fmt: skip
    assert [row["sk"] for page in ranged for row in page] == ["L#2", "L#3", "L#4"]


def test_a_query_of_a_sparse_index_sees_only_items_that_carry_its_key(table: Table) -> None:
    index = keys.PENDING_INDEX
    for number, expiry in enumerate(["0003", "0001", "0002", "0004"]):
        table.put({"pk": f"P#{number}", "sk": "META", "gsi1pk": "PENDING", "gsi1sk": expiry})
    table.put({"pk": "P#9", "sk": "META", "status": "approved"})

    pages = table.query("PENDING", Attr(index.sk).lt("0004"), index=index, limit=2)

    assert [[row["gsi1sk"] for row in page] for page in pages][:2] == [["0001", "0002"], ["0003"]]


# --- every rule of the store, rendered and evaluated alike ---------------------------------

NOW = 100.0
SAMPLES: list[Item] = [
    item(status="idle", updated_at=10.0),
    item(status="done", lease_owner="a", lease_until=150.0),
    item(status="running", lease_owner="a", lease_until=90.0, updated_at=50.0),
    item(status="running", lease_owner="b", lease_until=150.0),
    item(status="running", updated_at=99.5),
    item(status="paused", pending_id="p1", updated_at=20.0),
    item(status="pending", expires_at=150.0, reminders=0),
    item(status="pending", expires_at=100.0),
    item(status="pending", expires_at=150.0, reminders=1),
    item(status="approved", expires_at=150.0, ttl=1000),
    item(status="pending", expires_at=150.0, ttl=100),
    item(created_at=50.0, attempts=1, lock_owner="a", lock_until=150.0, failed=False),
    item(created_at=50.0, attempts=2, lock_owner="b", lock_until=90.0, last_error="503"),
    item(created_at=99.0, attempts=1, notified_at=99.5),
    item(created_at=10.0, failed=True),
    item(revoked_at=5.0),
    item(label="ci"),
]
RULES: dict[str, Condition] = {
    "live": rules.live(NOW),
    "absent": rules.absent(NOW),
    "claimable for a message": rules.claimable("message", "a", NOW),
    "claimable for a resume": rules.claimable("resume", "a", NOW, "p1"),
    "claimable for a redrive": rules.claimable("redrive", "a", NOW),
    "owned": rules.owned("a"),
    "stalled": rules.stalled(NOW),
    "resolvable by a human": rules.resolvable("approved", NOW),
    "resolvable by the expiry": rules.resolvable("expired", NOW),
    "first reminder": rules.remindable(0, NOW),
    "second reminder": rules.remindable(1, NOW),
    "unsent": rules.unsent(NOW),
    "sendable": rules.sendable("a", NOW),
    "releasable": rules.releasable("b", NOW),
    "free key": rules.FREE_KEY,
    "unrevoked key": rules.UNREVOKED_KEY,
}


@pytest.mark.parametrize("rule", list(RULES))
def test_every_rule_is_applied_by_the_table_exactly_when_it_holds_in_python(
    table: Table, rule: str
) -> None:
    condition = RULES[rule]
    disagreements = []
    for sample in SAMPLES:
        table.put(sample)
        refused = attempt(lambda: table.update(Update(KEY, {"touched": 1}, condition=condition)))
        if (refused is None) != condition.holds(sample):
            disagreements.append(sample)

    assert disagreements == []
    # the samples exercise both answers of every rule (a free key is one nothing holds yet)
    answers = {condition.holds(sample) for sample in SAMPLES}
    assert answers == ({False} if rule == "free key" else {True, False})
