"""The channel conformance checks: the ``Channel`` port's rules, run against any adapter.

The rules the outbox's retries rely on: a failed send raises ``SendFailed`` and
is never swallowed; every retry carries the same idempotency key; and a retry after a
send whose record was lost delivers nothing new wherever the transport can
promise it (elsewhere it delivers again with the same key, for the receiver to
drop). Each check takes a ``ChannelHarness``: the channel and a scriptable view
of the service it talks to, fresh for each check.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final, Protocol

from signoff.channels.base import Delivery
from signoff.channels.notification import Notification, idempotency_key
from signoff.errors import SendFailed

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.channels.base import Channel

__all__ = [
    "CHANNEL_CHECKS",
    "ChannelHarness",
    "channel_key",
    "check_channel",
    "sample_approval",
]

RUN_ID: Final = "run-1"


class ChannelHarness(Protocol):
    """One channel and its (scripted) service."""

    channel: Channel
    # Whether a retry after an unrecorded send delivers nothing new (docs/channels.md's table).
    dedupes_unrecorded: bool

    def fail_next(self, times: int, *, retryable: bool) -> None:
        """Make the service refuse the next ``times`` sends, transiently or for good."""
        ...

    def delivered(self) -> list[str]:
        """The keys the service accepted, in order (as it sees them: ``carried``)."""
        ...

    def carried(self, key: str) -> str:
        """The key the service sees for a send with the channel key ``key``."""
        ...


def sample_approval(pending_id: str = "p1", *, token: str = "token-1") -> Notification:  # noqa: S107
    """An approval of ``issue_refund`` in run ``run-1``, its links carrying ``token``."""
    base = "https://signoff.example.com"
    return Notification(
        kind="approval",
        agent="customer-service",
        run_id=RUN_ID,
        pending_id=pending_id,
        title="Approve issue_refund?",
        body='issue_refund {"orderId": "A-17", "amount": 25}',
        tool="issue_refund",
        args={"orderId": "A-17", "amount": 25},
        resume_token=token,
        expires_at="2026-01-02T00:00:00.000Z",
        link_url=f"{base}/approve?t={token}",
        approve_url=f"{base}/pending/{pending_id}/approve?t={token}",
        deny_url=f"{base}/pending/{pending_id}/deny?t={token}",
    )


def channel_key(harness: ChannelHarness, pending_id: str = "p1") -> str:
    """The channel key the notifier gives this approval (``runId:pendingId:channel``)."""
    return idempotency_key(RUN_ID, pending_id, harness.channel.name)


def _refused(harness: ChannelHarness, key: str) -> SendFailed:
    failed: SendFailed | None = None
    try:
        harness.channel.notify(sample_approval(), key)
    except SendFailed as exc:
        failed = exc
    if failed is None:
        raise AssertionError("a send the service refused did not raise SendFailed (swallowed)")
    assert failed.channel == harness.channel.name, "SendFailed names another channel"
    return failed


def _delivered(harness: ChannelHarness, *keys: str) -> None:
    expected = [harness.carried(key) for key in keys]
    got = harness.delivered()
    assert got == expected, f"the service got {got}, expected {expected}"


def check_send_delivered_once(harness: ChannelHarness) -> None:
    """A send arrives once, carrying its key, and returns a ``Delivery``."""
    key = channel_key(harness)
    delivery = harness.channel.notify(sample_approval(), key)
    _delivered(harness, key)
    assert isinstance(delivery, Delivery), "notify must return a Delivery"


def check_transient_failure_then_retry(harness: ChannelHarness) -> None:
    """A transient failure raises retryable; the retry arrives with the same key."""
    key = channel_key(harness)
    harness.fail_next(1, retryable=True)
    assert _refused(harness, key).retryable is True, "a transient failure must be retryable"
    _delivered(harness)
    harness.channel.notify(sample_approval(), key)
    _delivered(harness, key)


def check_permanent_failure(harness: ChannelHarness) -> None:
    """A permanent failure raises, not retryable, and delivers nothing."""
    harness.fail_next(1, retryable=False)
    assert _refused(harness, channel_key(harness)).retryable is False, "must not be retryable"
    _delivered(harness)


def _never_swallowed(harness: ChannelHarness, *, retryable: bool) -> None:
    harness.fail_next(3, retryable=retryable)
    key = channel_key(harness)
    for _ in range(3):
        _refused(harness, key)
    _delivered(harness)
    harness.channel.notify(sample_approval(), key)
    _delivered(harness, key)


def check_transient_failures_never_swallowed(harness: ChannelHarness) -> None:
    """Three transient refusals in a row each raise; the next accepted send arrives."""
    _never_swallowed(harness, retryable=True)


def check_permanent_failures_never_swallowed(harness: ChannelHarness) -> None:
    """Three permanent refusals in a row each raise; the next accepted send arrives."""
    _never_swallowed(harness, retryable=False)


def check_notifications_keep_their_keys(harness: ChannelHarness) -> None:
    """Two notifications arrive as two, each with its own key."""
    first, second = channel_key(harness, "p1"), channel_key(harness, "p2")
    harness.channel.notify(sample_approval("p1"), first)
    harness.channel.notify(sample_approval("p2"), second)
    _delivered(harness, first, second)


def check_crash_between_send_and_record(harness: ChannelHarness) -> None:
    """A retry told only that an earlier attempt left no receipt: one message where the
    transport dedupes (``dedupes_unrecorded``), else a copy carrying the same key."""
    key = channel_key(harness)
    harness.channel.notify(sample_approval(), key)
    unrecorded = Delivery(unconfirmed_since=time.time() - 5)
    harness.channel.notify(sample_approval(), key, previous=unrecorded)
    _delivered(harness, *[key] * (1 if harness.dedupes_unrecorded else 2))


CHANNEL_CHECKS: Final[dict[str, Callable[[ChannelHarness], None]]] = {
    "send_delivered_once": check_send_delivered_once,
    "transient_failure_then_retry": check_transient_failure_then_retry,
    "permanent_failure": check_permanent_failure,
    "transient_failures_never_swallowed": check_transient_failures_never_swallowed,
    "permanent_failures_never_swallowed": check_permanent_failures_never_swallowed,
    "notifications_keep_their_keys": check_notifications_keep_their_keys,
    "crash_between_send_and_record": check_crash_between_send_and_record,
}


def check_channel(make: Callable[[], ChannelHarness]) -> None:
    """Run every check, each on a fresh harness from ``make``.

    Raises:
        AssertionError: the first check the channel fails, named.
    """
    for name, check in CHANNEL_CHECKS.items():
        try:
            check(make())
        except AssertionError as exc:
            raise AssertionError(f"channel conformance: {name}: {exc}") from exc
