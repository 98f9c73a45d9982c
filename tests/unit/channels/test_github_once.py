"""One GitHub comment per notification, through the notifier, against GitHub on loopback.

The loopback GitHub keeps one issue's comments and lists them back; the test
reads the exact REST calls it received. A crash is the process dying at a
chosen outbox write (``tests/support/once.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from signoff.channels.github.channel import GitHubChannel
from signoff.clock import ManualClock
from tests.support.chat import http as http
from tests.support.github_api import FakeGitHub
from tests.support.once import (
    SUBJECT,
    Crash,
    channel_key,
    crash_at,
    invocation,
    outbox_with_one_row,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

    from signoff.notify.hub import Notifier
    from signoff.store.memory import MemoryStore

REPO, ISSUE = "acme/payments", 42
COMMENTS = f"/repos/{REPO}/issues/{ISSUE}/comments"
KEY = channel_key("ops-github")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def github(clock: ManualClock) -> Iterator[FakeGitHub]:
    with FakeGitHub(REPO, ISSUE, now=lambda: clock.now().timestamp()) as fake:
        yield fake


@pytest.fixture
def store(clock: ManualClock) -> MemoryStore:
    return outbox_with_one_row(clock, "ops-github")


def hub(store: MemoryStore, clock: ManualClock, github: FakeGitHub, http: httpx.Client) -> Notifier:
    """A fresh invocation, the channel pointed at the loopback GitHub."""
    channel = GitHubChannel(
        "ops-github",
        REPO,
        ISSUE,
        "ghs_test",
        client=http,
        clock=clock,
        api_url=github.url,
        allow_private=True,
    )
    return invocation(store, clock, channel)


def test_the_first_send_lists_then_posts_one_marked_comment(
    store: MemoryStore, clock: ManualClock, github: FakeGitHub, http: httpx.Client
) -> None:
    hub(store, clock, github, http).deliver(SUBJECT)

    assert github.calls() == [("GET", COMMENTS), ("POST", COMMENTS)]
    assert github.markers() == [KEY]
    [row] = store.outbox.rows(SUBJECT)
    assert row.notified_at is not None
    assert row.receipt is not None
    assert row.receipt["commentId"] == "1001"


def test_a_crash_after_the_post_and_before_any_record_finds_the_marker_and_posts_nothing(
    store: MemoryStore,
    clock: ManualClock,
    github: FakeGitHub,
    http: httpx.Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given the comment was posted and the process died before writing anything
    with monkeypatch.context() as patched:
        crash_at(patched, store, "record_receipt")
        crash_at(patched, store, "mark_sent")
        with pytest.raises(Crash):
            hub(store, clock, github, http).deliver(SUBJECT)
    assert len(github.comments) == 1

    # when the retry runs once the dead invocation's lock ran out
    clock.advance(31)
    report = hub(store, clock, github, http).deliver(SUBJECT)

    # then it found its marker among the issue's comments and adopted that comment
    assert report.sent == ["ops-github"]
    assert github.calls() == [("GET", COMMENTS), ("POST", COMMENTS), ("GET", COMMENTS)]
    assert github.markers() == [KEY]
    [row] = store.outbox.rows(SUBJECT)
    assert row.notified_at is not None
    assert row.receipt is not None
    assert row.receipt["commentId"] == "1001"


def test_a_crash_after_the_receipt_was_recorded_makes_no_request(
    store: MemoryStore,
    clock: ManualClock,
    github: FakeGitHub,
    http: httpx.Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given the receipt was recorded and the process died before notifiedAt
    with monkeypatch.context() as patched:
        crash_at(patched, store, "mark_sent")
        with pytest.raises(Crash):
            hub(store, clock, github, http).deliver(SUBJECT)

    clock.advance(31)
    report = hub(store, clock, github, http).deliver(SUBJECT)

    # then the retry trusts the recorded comment id: no lookup, no second post
    assert report.sent == ["ops-github"]
    assert github.calls() == [("GET", COMMENTS), ("POST", COMMENTS)]
    assert len(github.comments) == 1
