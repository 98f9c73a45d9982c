"""The stack update from the previous release's table to this one's is one CloudFormation accepts.

CloudFormation changes at most one global secondary index of a DynamoDB table per
stack update: it adds one or deletes one, never both, and it refuses a changed key
schema or projection of an index kept under its name (the index would have to be
deleted and added again, two updates). A key attribute of a kept index cannot
change type either, and DynamoDB refuses a table whose attribute definitions are
not exactly its key attributes. ``refusals`` states those rules once; the test
reads the previous release's ``SignoffTable`` (``tests/fixtures/previous_table.yaml``,
copied from the released template) and this one's from ``template.yaml``.

When a release must change two indexes (a new one, an old one dropped), it ships
in two releases, one index each (docs/scale.md, "Legacy keys").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from signoff_dev.local.template import load_template

ROOT = Path(__file__).resolve().parents[3]
PREVIOUS = ROOT / "tests" / "fixtures" / "previous_table.yaml"
TABLE = "SignoffTable"


def table_of(template: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = template["Resources"][TABLE]["Properties"]
    return properties


def _indexes(table: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {index["IndexName"]: index for index in table.get("GlobalSecondaryIndexes", [])}


def _types(table: dict[str, Any]) -> dict[str, str]:
    return {a["AttributeName"]: a["AttributeType"] for a in table.get("AttributeDefinitions", [])}


def _keys(schema: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(key["AttributeName"], key["KeyType"]) for key in schema]


def _projection(index: dict[str, Any]) -> tuple[str, frozenset[str]]:
    projection = index.get("Projection", {})
    # the order of NonKeyAttributes is not part of the index
    return projection.get("ProjectionType", "KEYS_ONLY"), frozenset(
        projection.get("NonKeyAttributes", [])
    )


def _key_attributes(table: dict[str, Any]) -> set[str]:
    schemas = [table["KeySchema"], *(i["KeySchema"] for i in _indexes(table).values())]
    return {name for schema in schemas for name, _ in _keys(schema)}


def definition_refusals(table: dict[str, Any]) -> list[str]:
    """Why DynamoDB refuses ``table`` on its own: its attribute definitions must be its keys."""
    defined, used = set(_types(table)), _key_attributes(table)
    refusals = [f"attribute {name} is a key but not defined" for name in sorted(used - defined)]
    refusals += [f"attribute {name} is defined but no key" for name in sorted(defined - used)]
    return refusals


def refusals(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Why CloudFormation would refuse to update table properties ``before`` to ``after``.

    Empty when it accepts the update.
    """
    reasons = definition_refusals(after)
    old, new = _indexes(before), _indexes(after)
    added, deleted = sorted(set(new) - set(old)), sorted(set(old) - set(new))
    if len(added) + len(deleted) > 1:
        reasons.append(
            f"one index added or deleted per update: this one adds {added or 'none'} "
            f"and deletes {deleted or 'none'}"
        )
    if _keys(before["KeySchema"]) != _keys(after["KeySchema"]):
        reasons.append("the table's own key schema changed (that replaces the table)")
    for name in sorted(set(old) & set(new)):
        if _keys(old[name]["KeySchema"]) != _keys(new[name]["KeySchema"]):
            reasons.append(f"index {name} is kept with another KeySchema")
        if _projection(old[name]) != _projection(new[name]):
            reasons.append(f"index {name} is kept with another Projection")
    # the attributes a kept key reads: the table's and every kept index's
    kept_schemas = [before["KeySchema"], *(old[name]["KeySchema"] for name in set(old) & set(new))]
    was, now = _types(before), _types(after)
    for attribute in sorted({name for schema in kept_schemas for name, _ in _keys(schema)}):
        if attribute in was and attribute in now and was[attribute] != now[attribute]:
            reasons.append(
                f"attribute {attribute} of a kept key changed type: {was[attribute]} -> "
                f"{now[attribute]}"
            )
    return reasons


# --- the release's update --------------------------------------------------------------------


def test_the_update_from_the_previous_release_is_one_cloudformation_accepts() -> None:
    before = table_of(load_template(PREVIOUS))
    after = table_of(load_template(ROOT / "template.yaml"))
    assert definition_refusals(before) == [], "the fixture is not a table DynamoDB created"
    assert refusals(before, after) == []


def test_the_previous_release_is_the_released_table() -> None:
    # the fixture is the released template's resource: guard it against later edits
    before = table_of(load_template(PREVIOUS))
    assert sorted(_indexes(before)) == [
        "by-tenant",
        "leases-by-expiry",
        "outbox-unsent",
        "pending-by-expiry",
    ]


# --- the checker -----------------------------------------------------------------------------


def _table(*indexes: dict[str, Any], types: dict[str, str] | None = None) -> dict[str, Any]:
    names = {"pk", "sk"} | {key["AttributeName"] for i in indexes for key in i["KeySchema"]}
    types = {name: "S" for name in names} | (types or {})
    return {
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": types[name]} for name in sorted(names)
        ],
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": list(indexes),
    }


def _index(name: str, pk: str, sk: str, projection: str = "ALL", **more: Any) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": [
            {"AttributeName": pk, "KeyType": "HASH"},
            {"AttributeName": sk, "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": projection, **more},
    }


OLD = _index("old", "gsi1pk", "gsi1sk")
NEW = _index("new", "gsi5pk", "gsi5sk", "KEYS_ONLY")
OTHER = _index("other", "gsi6pk", "gsi6sk")


def test_one_index_added_is_accepted() -> None:
    assert refusals(_table(OLD), _table(OLD, NEW)) == []


def test_one_index_deleted_is_accepted() -> None:
    assert refusals(_table(OLD, NEW), _table(NEW)) == []


def test_nothing_changed_is_accepted() -> None:
    assert refusals(_table(OLD, NEW), _table(OLD, NEW)) == []


def test_two_indexes_added_are_refused() -> None:
    assert refusals(_table(OLD), _table(OLD, NEW, OTHER)) == [
        "one index added or deleted per update: this one adds ['new', 'other'] and deletes none"
    ]


def test_an_index_added_and_one_deleted_are_refused() -> None:
    (reason,) = refusals(_table(OLD), _table(NEW))
    assert "adds ['new'] and deletes ['old']" in reason


def test_a_changed_projection_is_refused() -> None:
    narrowed = _index("old", "gsi1pk", "gsi1sk", "KEYS_ONLY")
    assert refusals(_table(OLD), _table(narrowed)) == ["index old is kept with another Projection"]


def test_changed_projected_attributes_are_refused_but_not_their_order() -> None:
    some = _index("old", "gsi1pk", "gsi1sk", "INCLUDE", NonKeyAttributes=["a", "b"])
    reordered = _index("old", "gsi1pk", "gsi1sk", "INCLUDE", NonKeyAttributes=["b", "a"])
    more = _index("old", "gsi1pk", "gsi1sk", "INCLUDE", NonKeyAttributes=["a", "b", "c"])
    assert refusals(_table(some), _table(reordered)) == []
    assert refusals(_table(some), _table(more)) == ["index old is kept with another Projection"]


def test_a_changed_key_schema_is_refused() -> None:
    rekeyed = _index("old", "gsi1pk", "gsi5sk")
    assert refusals(_table(OLD), _table(rekeyed)) == ["index old is kept with another KeySchema"]


def test_a_kept_key_attribute_changing_type_is_refused() -> None:
    assert refusals(_table(OLD), _table(OLD, types={"gsi1sk": "N"})) == [
        "attribute gsi1sk of a kept key changed type: S -> N"
    ]


def _defining(table: dict[str, Any], *names: str) -> dict[str, Any]:
    defined = [{"AttributeName": name, "AttributeType": "S"} for name in names]
    return table | {"AttributeDefinitions": defined}


@pytest.mark.parametrize(
    ("table", "reason"),
    [
        (_defining(_table(OLD), "pk", "sk"), "attribute gsi1pk is a key but not defined"),
        (
            _defining(_table(OLD), "pk", "sk", "gsi1pk", "gsi1sk", "gsi5pk"),
            "attribute gsi5pk is defined but no key",
        ),
    ],
)
def test_attribute_definitions_must_be_the_keys(table: dict[str, Any], reason: str) -> None:
    assert reason in refusals(_table(OLD), table)
