"""Suite-wide checks: every LoopEvent built anywhere in the tests is validated
against the checked-in ``protocol/loop-event.schema.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from signoff import events
from tests.support.aws import aws as aws  # the moto fixture, for every test folder

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_FILE = ROOT / "protocol" / "loop-event.schema.json"


def schema_validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


_VALIDATOR = schema_validator()
VALIDATED: list[str] = []


def validate_event(data: dict[str, Any]) -> None:
    """Fail loudly when an event's wire form breaks the schema."""
    errors = sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(e.path))
    if errors:
        raise AssertionError(f"event violates the schema: {data}: {errors[0].message}")
    VALIDATED.append(data["type"])


@pytest.fixture(autouse=True, scope="session")
def _validate_every_event() -> Any:
    # Every event class inherits its constructor from _Event, so wrapping it sees
    # each event the engine, the adapters or a test creates.
    original = events._Event.__init__

    def checked(self: events._Event, /, **data: Any) -> None:
        original(self, **data)
        if "type" in type(self).model_fields:
            validate_event(events.dump(self))  # type: ignore[arg-type]

    events._Event.__init__ = checked  # type: ignore[method-assign]
    yield
    events._Event.__init__ = original  # type: ignore[method-assign]
