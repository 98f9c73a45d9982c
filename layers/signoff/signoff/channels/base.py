"""The channel port: deliver one notification, or raise.

Two rules from the notifier contract: a failed send raises (never swallowed),
and the idempotency key is passed to the service (a header, a stored message
id) so a retry after a lost response does not notify twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeGuard, runtime_checkable

from signoff.errors import SendFailed

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from signoff.channels.notification import Notification

__all__ = [
    "Channel",
    "ClickApproved",
    "Delivery",
    "PerRecipient",
    "Refreshes",
    "SendFailed",
    "already_sent",
]


@dataclass(frozen=True, kw_only=True)
class Delivery:
    """What a successful send leaves behind, e.g. Slack's message ``ts`` to update later."""

    receipt: dict[str, str] = field(default_factory=dict)
    # Only on the ``previous`` a channel is handed: an earlier attempt of this send
    # was made and left no receipt (it may have been delivered, its record lost).
    # The row's creation time (epoch seconds) bounds how far back a channel that
    # can find its own messages (Slack's marker) looks for it.
    unconfirmed_since: float | None = None


class Channel(Protocol):
    """A place notifications go: a webhook, a Slack channel, a mailbox …"""

    name: str

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Send ``notification``; ``previous`` is the receipt of an earlier, unrecorded attempt.

        Raises:
            SendFailed: the service refused or could not be reached.
        """


@runtime_checkable
class PerRecipient(Protocol):
    """A channel whose every recipient gets their own message with their own links (email).

    The notifier composes an approval or question once per address in
    ``recipients`` (each link's token names its recipient) and hands them over
    together; one outbox row still stands for the whole channel.
    """

    name: str
    recipients: list[str]

    def notify_each(
        self,
        letters: Mapping[str, Notification],
        idempotency_key: str,
        previous: Delivery | None = None,
    ) -> Delivery:
        """Send ``letters[address]`` to each address; ``previous`` as in ``Channel.notify``.

        Raises:
            SendFailed: a recipient's send failed (retryable if any failure is).
        """


@runtime_checkable
class ClickApproved(Protocol):
    """A chat channel (Slack, Lark) whose buttons decide as the chat user who clicks.

    When ``approvers`` lists anyone, only they decide from it — so the notifier
    hands it no token that decides without naming its person (an open-link
    button would let anyone in the chat decide): its links are ``view`` links.
    An empty list means anyone in the chat may decide, and it gets the links of
    today. Email lists approvers too, but is ``PerRecipient``: each of its links
    names its recipient, whose address the approvers are checked against.
    """

    name: str
    approvers: Sequence[str]


@runtime_checkable
class Refreshes(Protocol):
    """A channel whose sent message can be redrawn with a newer notification (Slack, Lark).

    After an escalation step the messages sent before it are redrawn to say so,
    buttons kept (their readers may still decide). Email and webhooks cannot
    change what they delivered, so they are not ``Refreshes``.
    """

    name: str

    def refresh(self, receipt: Mapping[str, str], notification: Notification) -> None:
        """Redraw the message ``receipt`` names as ``notification``.

        Raises:
            SendFailed: the receipt names no message, or the service refused.
        """


def already_sent(previous: Delivery | None, receipt_key: str) -> TypeGuard[Delivery]:
    """Whether ``previous`` names a sent message: its receipt has ``receipt_key``.

    Such an attempt succeeded and only its recording was lost, so that message IS
    the notification; sending again would show the person the same one twice.
    """
    return previous is not None and bool(previous.receipt.get(receipt_key))
