"""The checked-in LoopEvent schema is exactly what the models generate, and it bites."""

from __future__ import annotations

import json

import pytest

from signoff.events import ENGINE_EVENT_TYPES, LoopEvent, loop_event_schema
from tests.conftest import SCHEMA_FILE, schema_validator


def test_checked_in_schema_matches_the_models() -> None:
    on_disk = json.loads(SCHEMA_FILE.read_text())
    assert on_disk == loop_event_schema(), (
        "protocol/loop-event.schema.json drifted from signoff.events; regenerate it with "
        "`signoff schema > protocol/loop-event.schema.json`"
    )


def test_schema_is_2020_12_and_closed() -> None:
    schema = loop_event_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for name, definition in schema["$defs"].items():
        assert definition["additionalProperties"] is False, name


def test_every_protocol_event_type_has_a_definition() -> None:
    adapter = {"session", "approval:pending", "question:pending", "done", "error"}
    consts = {
        d["properties"]["type"]["const"]
        for d in loop_event_schema()["$defs"].values()
        if "type" in d.get("properties", {})
    }
    assert consts == set(ENGINE_EVENT_TYPES) | adapter


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "done"},  # text is required
        {"type": "done", "text": "x", "stopReason": "crashed"},  # not an allowed stop reason
        {"type": "done", "text": "x", "extra": 1},  # additionalProperties: false
        {"type": "budget:check", "action": "ok", "usedTokens": 1, "budgetTokens": 2},  # no ratio
        {
            "type": "approval:pending",
            "id": "p",
            "tool": "t",
            "args": {},
            "scope": {"tenant": "a", "environment": "b", "agent": "c"},
            "reason": "r",
            "requestedAt": "yesterday",  # not a date-time
        },
        {"type": "no:such:event"},
    ],
)
def test_schema_rejects_what_the_protocol_forbids(bad: dict[str, object]) -> None:
    assert list(schema_validator().iter_errors(bad))


def test_protocol_examples_validate() -> None:
    validator = schema_validator()
    for example in [
        {"type": "session", "sessionId": "5a83c6b4"},
        {
            "type": "budget:check",
            "action": "ok",
            "usedTokens": 2,
            "budgetTokens": 8000,
            "ratio": 0.00025,
        },
        {
            "type": "tool:started",
            "id": "call_1",
            "tool": "issue_refund",
            "args": {"orderId": "A-1001"},
            "detailText": "matched rule 'refunds-need-approval'",
        },
        {
            "type": "approval:pending",
            "id": "3f9c",
            "tool": "issue_refund",
            "args": {"orderId": "A-1001"},
            "scope": {
                "tenant": "default",
                "environment": "production",
                "agent": "customer-service",
            },
            "reason": "matched rule 'refunds-need-approval'",
            "requestedAt": "2026-08-28T01:34:32.193Z",
        },
        {"type": "done", "text": "Refunded $42.00..."},
    ]:
        assert not list(validator.iter_errors(example)), example


def test_loop_event_union_round_trips() -> None:
    from pydantic import TypeAdapter

    from signoff.events import dump, parse

    sample = parse({"type": "prompt:compaction", "from": 9, "to": 4})
    assert dump(sample) == {"type": "prompt:compaction", "from": 9, "to": 4}
    assert TypeAdapter(LoopEvent).validate_python(dump(sample)) == sample
