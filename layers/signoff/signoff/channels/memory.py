"""The in-memory channel: records what it was asked to send, and fails when scripted to.

Tests and the local stack use it where a real service would be; the channel
contract suite runs against it like against every other adapter, so it keeps
the port's rules (raise on failure, never swallow, keep the key).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from signoff.channels.base import Delivery
from signoff.channels.notification import Notification
from signoff.errors import SendFailed

__all__ = [
    "FailWith",
    "RecordingChannel",
    "RecordingChat",
    "RecordingMailbox",
    "Sent",
    "fail_times",
]

# Decides one attempt: the failure to raise, or None to deliver. Its ``channel``
# is replaced by the recording channel's own name.
FailWith = Callable[[Notification, str], SendFailed | None]


@dataclass(frozen=True, kw_only=True)
class Sent:
    """One delivered notification and the idempotency key it carried."""

    notification: Notification
    key: str


class RecordingChannel:
    """A channel that keeps every delivery in ``sent`` and every attempt in ``attempts``."""

    def __init__(self, name: str, fail_with: FailWith | None = None) -> None:
        self.name = name
        self._fail_with = fail_with
        self.sent: list[Sent] = []
        self.attempts: list[Sent] = []
        # The notifier sends to channels from a thread pool.
        self._lock = threading.Lock()

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Record ``notification``, or raise what ``fail_with`` scripted for this attempt.

        Raises:
            SendFailed: ``fail_with`` returned a failure for this attempt.
        """
        attempt = Sent(notification=notification, key=idempotency_key)
        with self._lock:
            self.attempts.append(attempt)
            failure = self._fail_with(notification, idempotency_key) if self._fail_with else None
            if failure is not None:
                raise SendFailed(
                    self.name,
                    failure.reason,
                    retryable=failure.retryable,
                    status=failure.status,
                    retry_after=failure.retry_after,
                )
            self.sent.append(attempt)
            return Delivery(receipt={"delivery": str(len(self.sent))})

    def keys(self) -> list[str]:
        """The idempotency keys of the deliveries, in order."""
        with self._lock:
            return [sent.key for sent in self.sent]


class RecordingChat(RecordingChannel):
    """A recording chat channel whose sent messages can be redrawn (``Refreshes``):
    each redraw is kept in ``refreshed`` with the receipt it named."""

    def __init__(self, name: str, fail_with: FailWith | None = None) -> None:
        super().__init__(name, fail_with)
        self.refreshed: list[tuple[dict[str, str], Notification]] = []

    def refresh(self, receipt: Mapping[str, str], notification: Notification) -> None:
        with self._lock:
            self.refreshed.append((dict(receipt), notification))


class RecordingMailbox(RecordingChannel):
    """A recording channel whose recipients each get their own letter (``PerRecipient``).

    Each letter is one attempt with the key ``<key>:<address>``; ``fail_with`` decides
    each. A failure carries the receipt of the letters delivered before it, as the
    email channel's does, and letters in ``previous`` are not delivered again.
    """

    def __init__(self, name: str, recipients: list[str], fail_with: FailWith | None = None) -> None:
        super().__init__(name, fail_with)
        self.recipients = list(recipients)

    def notify_each(
        self,
        letters: Mapping[str, Notification],
        idempotency_key: str,
        previous: Delivery | None = None,
    ) -> Delivery:
        """Record each address's letter, or raise what ``fail_with`` scripted for it.

        Raises:
            SendFailed: a letter failed; its ``receipt`` names the ones delivered.
        """
        done = dict(previous.receipt) if previous is not None else {}
        for address, notification in letters.items():
            if f"delivery:{address}" in done:
                continue
            try:
                self.notify(notification, f"{idempotency_key}:{address}")
            except SendFailed as failure:
                raise SendFailed(
                    self.name, failure.reason, retryable=failure.retryable, receipt=done
                ) from failure
            done[f"delivery:{address}"] = str(len(self.sent))
        return Delivery(receipt=done)


def fail_times(
    times: int,
    *,
    retryable: bool = True,
    reason: str = "scripted failure",
    status: int | None = None,
    retry_after: float | None = None,
) -> FailWith:
    """A ``fail_with`` that fails the first ``times`` attempts, then lets every one through."""
    remaining = [times]

    lock = threading.Lock()

    def script(notification: Notification, idempotency_key: str) -> SendFailed | None:
        with lock:
            if remaining[0] <= 0:
                return None
            remaining[0] -= 1
        return SendFailed(
            "recording",
            reason,
            retryable=retryable,
            status=status,
            retry_after=retry_after,
        )

    return script
