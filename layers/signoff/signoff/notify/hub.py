"""The notifier: fan one subject's outbox rows out to their channels, each sent once.

A subject is a pending item (its approval or question is composed when sent,
with fresh signed links) or a lifecycle subject whose rows carry the whole
notification (``signoff.notify.lifecycle``). Per channel: take the row's send
lock (so concurrent invocations never send the same notification at the same
time), send with the row's stable idempotency key, and record the channel's
receipt (its own write, at once) and then ``notifiedAt``, only after the
channel accepted it. A claim after an attempt that left no receipt tells the
channel so (``Delivery.unconfirmed_since``): Slack then looks for its marked
message before posting again. A permanent failure is recorded with its
reason and retried by the sweeper on a slow schedule (``RetrySchedule``: a
configuration fixed meanwhile heals it), then failed for good; a transient
one releases the lock and makes ``deliver`` raise, so the queue retries the
message — and only the channels still unsent are tried again. Channels are
looked up (and, in a deployment, built: ``channels.build.ChannelSet``) row by
row, so a channel that cannot be built fails its own rows the same way and the
others still deliver.

An escalation step's subject (``Subject.escalate``) is composed from its
item like the item's own rows. Once it went out, the messages sent before it (the
item's own and the earlier steps') are redrawn from the item as it stands now,
saying it was escalated, on the channels that can change a sent message
(``Refreshes``: Slack, Lark); best effort, like a decision's outcome update.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import ValidationError

from signoff.channels.base import ClickApproved, Delivery, PerRecipient, Refreshes
from signoff.channels.notification import Notification
from signoff.channels.subject import Subject
from signoff.errors import SendFailed
from signoff.ids import new_id

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from signoff.channels.base import Channel
    from signoff.clock import Clock
    from signoff.notify.compose import Composer
    from signoff.store.base import NotifierOutbox, PendingReader
    from signoff.store.pending_records import OutboxRow, PendingItem

__all__ = ["DEFAULT_RETRY_DELAYS", "FanoutReport", "Notifier", "RetrySchedule"]

# 5 min, 30 min, 2 h: a permanent failure is mostly configuration (a revoked token,
# a wrong URL), which a person fixes in minutes to hours, not seconds.
DEFAULT_RETRY_DELAYS: tuple[float, ...] = (300.0, 1800.0, 7200.0)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetrySchedule:
    """When a row that failed permanently is sent again: one delay per extra attempt."""

    delays: tuple[float, ...] = DEFAULT_RETRY_DELAYS

    def retry_at(self, failures: int, now: float) -> float | None:
        """When to retry after the ``failures``-th permanent failure; None: failed for good."""
        if failures > len(self.delays):
            return None
        return now + self.delays[failures - 1]


@dataclass(kw_only=True)
class FanoutReport:
    """What one ``deliver`` did, channel by channel."""

    sent: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # sent before, or another sender holds it
    failed: dict[str, str] = field(default_factory=dict)  # permanent, recorded
    retrying: dict[str, SendFailed] = field(default_factory=dict)  # transient


class Notifier:
    """Delivers outbox rows, subject by subject, to the deployment's channels."""

    def __init__(
        self,
        *,
        pending: PendingReader,
        outbox: NotifierOutbox,
        channels: Mapping[str, Channel],
        composer: Callable[[], Composer],
        clock: Clock,
        owner: str | None = None,
        lock_ttl: float = 60.0,
        # Sends wait on the network, not the CPU: a full batch (10 records x a few
        # channels) goes out at once.
        max_workers: int = 32,
        on_permanent_failure: Callable[[OutboxRow, SendFailed], None] | None = None,
        retries: RetrySchedule | None = None,
    ) -> None:
        self.pending = pending
        self.outbox = outbox
        self.channels = channels
        self._composer = composer
        self.clock = clock
        self.owner = owner or new_id()
        self.lock_ttl = lock_ttl
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="notify")
        self._on_permanent_failure = on_permanent_failure
        self.retries = retries or RetrySchedule()

    def deliver(self, subject: Subject | str) -> FanoutReport:
        """Send every unsent channel of one subject, channels in parallel.

        ``subject`` is the queue message's (``NotifyMessage.subject``), or its text
        as the outbox keys it: a pending item's, whose rows are composed from the
        item, or a lifecycle subject's, whose rows carry their own notification.

        Raises:
            SendFailed: a channel failed transiently (the others were recorded).
            ValueError: ``subject`` is text that spells no subject.
        """
        subject = subject if isinstance(subject, Subject) else Subject.parse(subject)
        report = FanoutReport()
        if subject.kind == "votes" and subject.pending_id is not None:
            # a vote short of the quorum: the messages sent show the new tally
            self.redraw(subject.pending_id)
            return report
        rows = [row for row in self.outbox.rows(str(subject)) if row.notified_at is None]
        item = None
        if any(row.notification is None for row in rows) and subject.composed_from is not None:
            item = self.pending.get(subject.composed_from)
        if item is None:
            # gone past its retention (or never an item's): nothing to compose from
            rows = [row for row in rows if row.notification is not None]
        futures = [self._pool.submit(self._send_one, item, row, report) for row in rows]
        for future in futures:
            future.result()
        if item is not None and report.sent and subject.kind == "escalate":
            self._refresh_earlier(item.id, subject)
        if report.retrying:
            first = next(iter(report.retrying.values()))
            raise SendFailed(
                ",".join(sorted(report.retrying)),
                "; ".join(f"{name}: {e.reason}" for name, e in sorted(report.retrying.items())),
                retryable=True,
                retry_after=first.retry_after,
            )
        return report

    def _send_one(self, item: PendingItem | None, row: OutboxRow, report: FanoutReport) -> None:
        now = self.clock.now().timestamp()
        claimed = self.outbox.claim(
            row.pending_id, row.channel, owner=self.owner, until=now + self.lock_ttl, now=now
        )
        if claimed is None:
            report.skipped.append(row.channel)
            return
        previous = _previous(claimed)
        try:
            # Built here, per row: a channel that cannot be built (its library, its
            # secret, its settings) raises SendFailed for its own rows only.
            channel = self.channels.get(row.channel)
            if channel is None:
                raise SendFailed(row.channel, "no such channel in channels.yaml", retryable=False)
            if (
                item is not None
                and claimed.notification is None
                and isinstance(channel, PerRecipient)
            ):
                # each recipient's own links: a decision through one names its person
                composer = self._composer()
                # an approver's own inbox link too, where the channel says so (inboxLink)
                inbox = _inbox_linked(channel)
                letters = {
                    address: composer.for_item(
                        item, recipient=address, channel=row.channel, inbox=inbox(address)
                    )
                    for address in channel.recipients
                }
                delivery = channel.notify_each(letters, claimed.idempotency_key, previous)
            else:
                notification = self._notification(claimed, item, deciding=_decides(channel))
                delivery = channel.notify(notification, claimed.idempotency_key, previous)
        except SendFailed as failure:
            if failure.retryable:
                self.outbox.release(
                    row.pending_id,
                    row.channel,
                    owner=self.owner,
                    error=failure.reason,
                    receipt=failure.receipt,
                )
                report.retrying[row.channel] = failure
            else:
                self._give_up(claimed, failure, report)
            return
        if delivery.receipt:
            # Its own write, at once: the message exists now, and a retry handed its
            # receipt (Slack's ts) sends nothing even if recording it sent fails below.
            self.outbox.record_receipt(
                row.pending_id, row.channel, delivery.receipt, owner=self.owner
            )
        self.outbox.mark_sent(
            row.pending_id, row.channel, at=self.clock.now().timestamp(), receipt=delivery.receipt
        )
        report.sent.append(row.channel)

    def _notification(
        self, row: OutboxRow, item: PendingItem | None, *, deciding: bool
    ) -> Notification:
        """What the row sends: its stored notification, or its item's, composed now.

        ``deciding=False`` composes the item's without any token that decides.

        Raises:
            SendFailed: the stored notification is unreadable (permanent: it never will be).
        """
        if row.notification is not None:
            try:
                return Notification.model_validate(row.notification)
            except ValidationError as exc:
                raise SendFailed(
                    row.channel, f"stored notification is invalid: {exc}", retryable=False
                ) from exc
        if item is None:
            # deliver() keeps such rows out; a row must never be sent without its item
            raise SendFailed(row.channel, f"no pending item {row.pending_id}", retryable=False)
        return self._composer().for_item(item, deciding=deciding)

    def _refresh_earlier(self, pending_id: str, step: Subject) -> None:
        """Redraw the messages sent about ``pending_id`` before ``step`` (an escalation
        step's subject), from the item as it stands now; best effort, a failure is logged."""
        number = step.number or 0
        self._redraw_sent(pending_id, lambda item: number - 1, "show the escalation of")

    def redraw(self, pending_id: str) -> None:
        """Redraw every message sent about ``pending_id`` (its own and its escalation
        steps') from the item as it stands now, buttons kept, on the channels that can
        change a sent message; best effort, a failure is logged. Nothing once decided:
        the decision's own outcome update is what those messages show then."""
        self._redraw_sent(pending_id, lambda item: item.escalation_step, "redraw the message of")

    def _redraw_sent(
        self, pending_id: str, steps: Callable[[PendingItem], int], failing: str
    ) -> None:
        """Redraw what was sent about the item itself and its first ``steps(item)``
        escalation steps, on the channels that can change a sent message."""
        item = self.pending.get(pending_id)
        if item is None or item.status != "pending":
            return  # decided meanwhile: its outcome is what the messages should show
        subjects = [Subject.item(pending_id)] + [
            Subject.escalate(pending_id, n) for n in range(1, steps(item) + 1)
        ]
        for row in (row for subject in subjects for row in self.outbox.rows(str(subject))):
            if not row.receipt or row.notified_at is None:
                continue  # nothing sent that could be changed
            try:
                channel = self.channels.get(row.channel)
                if not isinstance(channel, Refreshes):
                    continue  # email and webhooks cannot change what they delivered
                notification = self._composer().for_item(item, deciding=_decides(channel))
                channel.refresh(row.receipt, notification)
            except SendFailed:
                log.warning("could not %s %s on %s", failing, pending_id, row.channel)

    def _give_up(self, row: OutboxRow, failure: SendFailed, report: FanoutReport) -> None:
        # Not at once: a slow retry (the sweeper's) lets a fixed configuration heal it.
        retry_at = self.retries.retry_at(row.failures + 1, self.clock.now().timestamp())
        self.outbox.mark_failed(
            row.pending_id, row.channel, reason=failure.reason, retry_at=retry_at
        )
        report.failed[row.channel] = failure.reason
        if self._on_permanent_failure is not None:
            # the row as recorded: its ``retry_at`` says whether it is failed for good
            failures = row.failures + 1
            recorded = row.model_copy(
                update={"failed": True, "failures": failures, "retry_at": retry_at}
            )
            self._on_permanent_failure(recorded, failure)


def _inbox_linked(channel: object) -> Callable[[str], bool]:
    """Which recipients' mails link their approvals inbox: the approvers', where the
    channel sets ``inboxLink`` (``EmailChannel.inbox_link``); nobody's elsewhere."""
    allows = getattr(channel, "allows", None)
    if not getattr(channel, "inbox_link", False) or not callable(allows):
        return lambda address: False
    return lambda address: bool(allows(address))


def _previous(row: OutboxRow) -> Delivery | None:
    """What the channel is told of the row's earlier attempts.

    Their receipt when one was recorded; when none was but this is not the first
    claim, an earlier attempt may have been delivered and died before its record
    (``unconfirmed_since``: a channel that can find its own messages looks first).
    """
    if row.receipt:
        return Delivery(receipt=row.receipt)
    if row.attempts > 1:
        return Delivery(unconfirmed_since=row.created_at)
    return None


def _decides(channel: Channel) -> bool:
    """Whether ``channel`` may be sent links that decide without naming who decides.

    Not a chat channel with ``approvers``: there, only a click names its person
    (the chat user), so a link would let anyone who reads the message decide.
    """
    return not (isinstance(channel, ClickApproved) and bool(channel.approvers))
