"""One message per notification through the notifier: what the channels' once-tests share.

A test seeds an in-memory outbox with one ``run_finish`` row for its channel,
builds a fresh notifier invocation around the channel (pointed at a service on
loopback), and makes the process die at a chosen outbox write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.channels.notification import Notification
from signoff.channels.subject import Subject
from signoff.notify import lifecycle
from signoff.notify.hub import Notifier
from signoff.store.memory import MemoryStore

if TYPE_CHECKING:
    import pytest

    from signoff.channels.base import Channel
    from signoff.clock import ManualClock
    from signoff.notify.compose import Composer

SUBJECT = str(Subject.run_finish("run_01"))  # the outbox's key
NOTE = Notification(
    kind="result", agent="billing", run_id="run_01", title="billing finished", body="Refunded."
)


class Crash(BaseException):
    """The process dying (not an Exception, so nothing on the way catches it)."""


def channel_key(channel: str) -> str:
    """The key the notifier sends ``SUBJECT`` with on ``channel``."""
    return f"run_01:{SUBJECT}:{channel}"


def outbox_with_one_row(clock: ManualClock, channel: str) -> MemoryStore:
    """A store whose outbox holds ``SUBJECT``'s unsent row for ``channel``."""
    store = MemoryStore(clock=clock)
    now = clock.now().timestamp()
    rows = lifecycle.rows(
        Subject.parse(SUBJECT), NOTE, [channel], now=now, retain_until=now + 86400
    )
    assert store.outbox.add(rows)
    return store


def invocation(store: MemoryStore, clock: ManualClock, channel: Channel) -> Notifier:
    """A fresh notifier invocation (its own owner id) sending through ``channel`` only."""

    def no_composer() -> Composer:
        raise AssertionError("lifecycle rows carry their notification")

    return Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels={channel.name: channel},
        composer=no_composer,
        clock=clock,
        lock_ttl=30,
    )


def crash_at(monkeypatch: pytest.MonkeyPatch, store: MemoryStore, write: str) -> None:
    """Make the process die when the notifier reaches the outbox's ``write``."""

    def die(*args: Any, **kwargs: Any) -> Any:
        raise Crash

    # raising=False: a test may also run against an outbox that lacks the write
    monkeypatch.setattr(store.outbox, write, die, raising=False)
