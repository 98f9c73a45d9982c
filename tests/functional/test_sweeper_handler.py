"""The sweeper function's handler, driven by events/sweeper_schedule.json, against moto."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from signoff.clock import SystemClock
from tests.support.lambdas import FakeLambdaContext, Lambdas, body, import_handler, load_event
from tests.support.lambdas import lambdas as lambdas

if TYPE_CHECKING:
    import pytest


def test_the_sweeper_expires_an_overdue_approval_and_its_turn_ends_denied(
    lambdas: Lambdas, monkeypatch: pytest.MonkeyPatch
) -> None:
    paused = body(lambdas.invoke("message", load_event("message_post")))
    assert paused["type"] == "approval", paused
    sweeper = import_handler("sweeper")
    # Days later: past the approval's expiry and every outbox row's send grace.
    later = datetime.now(UTC) + timedelta(days=2)
    monkeypatch.setattr(SystemClock, "now", lambda self: later)

    report = sweeper.handler(load_event("sweeper_schedule"), FakeLambdaContext())

    pending_id = paused["id"]
    assert report["expired"] == [pending_id], report
    assert report["resumed"] == [pending_id], report
    assert pending_id in report["requeued"], report
    assert lambdas.api.pending.get(pending_id).status != "pending"
