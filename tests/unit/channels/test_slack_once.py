"""One Slack message per notification, through the notifier, against a Slack on loopback.

The loopback Slack keeps the messages posted to it and lists them back (with
their metadata) from ``conversations.history``, as Slack does with
``include_all_metadata``; the test reads the exact Web API calls it received.
A crash is the process dying at a chosen outbox write (``tests/support/once.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from signoff.channels.slack.channel import SlackChannel
from signoff.clock import ManualClock
from tests.support.chat import http as http
from tests.support.once import (
    SUBJECT,
    Crash,
    channel_key,
    crash_at,
    invocation,
    outbox_with_one_row,
)
from tests.support.slack_api import FakeSlack

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

    from signoff.notify.hub import Notifier
    from signoff.store.memory import MemoryStore

CHANNEL = "C0123ABCD"
KEY = channel_key("slack")


@pytest.fixture
def slack_api() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(clock: ManualClock) -> MemoryStore:
    return outbox_with_one_row(clock, "slack")


def hub(
    store: MemoryStore, clock: ManualClock, slack_api: FakeSlack, http: httpx.Client
) -> Notifier:
    """A fresh invocation, the channel pointed at the loopback Slack."""
    slack = SlackChannel("slack", CHANNEL, "xoxb-test", client=http, base_url=slack_api.url)
    return invocation(store, clock, slack)


def test_the_first_send_posts_once_with_its_hidden_marker(
    store: MemoryStore, clock: ManualClock, slack_api: FakeSlack, http: httpx.Client
) -> None:
    hub(store, clock, slack_api, http).deliver(SUBJECT)

    assert slack_api.calls() == ["/chat.postMessage"]
    [post] = slack_api.server.requests
    assert post.json()["metadata"] == {
        "event_type": "signoff_notification",
        "event_payload": {"idempotency_key": KEY},
    }
    [row] = store.outbox.rows(SUBJECT)
    assert row.notified_at is not None
    assert row.receipt == {"ts": "1700000000.000001", "channel": CHANNEL}


def test_a_crash_after_the_post_and_before_any_record_finds_the_marker_and_posts_nothing(
    store: MemoryStore,
    clock: ManualClock,
    slack_api: FakeSlack,
    http: httpx.Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given the post went out and the process died before writing anything
    with monkeypatch.context() as patched:
        crash_at(patched, store, "record_receipt")
        crash_at(patched, store, "mark_sent")
        with pytest.raises(Crash):
            hub(store, clock, slack_api, http).deliver(SUBJECT)
    assert len(slack_api.messages) == 1

    # when the retry runs once the dead invocation's lock ran out
    clock.advance(31)
    report = hub(store, clock, slack_api, http).deliver(SUBJECT)

    # then it found its marker in the history and adopted that message
    assert report.sent == ["slack"]
    assert slack_api.calls() == ["/chat.postMessage", "/conversations.history"]
    assert len(slack_api.messages) == 1
    [row] = store.outbox.rows(SUBJECT)
    assert row.notified_at is not None
    assert row.receipt == {"ts": "1700000000.000001", "channel": CHANNEL}


def test_a_crash_after_the_receipt_was_recorded_posts_nothing_and_reads_no_history(
    store: MemoryStore,
    clock: ManualClock,
    slack_api: FakeSlack,
    http: httpx.Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given the receipt was written on its own and the process died before notifiedAt
    with monkeypatch.context() as patched:
        crash_at(patched, store, "mark_sent")
        with pytest.raises(Crash):
            hub(store, clock, slack_api, http).deliver(SUBJECT)
    [row] = store.outbox.rows(SUBJECT)
    assert row.notified_at is None and row.receipt["ts"] == "1700000000.000001"

    clock.advance(31)
    hub(store, clock, slack_api, http).deliver(SUBJECT)

    assert slack_api.calls() == ["/chat.postMessage"]
    [row] = store.outbox.rows(SUBJECT)
    assert row.notified_at is not None
