"""What the chat-app channels (Slack, Lark) do alike when they send and update a message.

Each vendor module keeps its own API calls, payloads and error codes; the rules
they share live here once: an approval or question needs a pending id for its
buttons, a failure in transit fails as ``SendFailed``, an outcome update needs the
receipt's message reference, and a question's options are listed the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.errors import SendFailed

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from signoff.channels.notification import Notification

__all__ = ["in_transit", "message_ref", "numbered", "require_buttons"]


def require_buttons(channel: str, notification: Notification) -> None:
    """Refuse an approval or question that cannot carry buttons (no pending id).

    Raises:
        SendFailed: permanent; no attempt could fix the notification.
    """
    if notification.kind in ("approval", "question") and not notification.pending_id:
        raise SendFailed(
            channel,
            f"a {notification.kind} without a pendingId has no buttons",
            retryable=False,
        )


def message_ref(channel: str, receipt: dict[str, str], key: str, what: str) -> str:
    """The receipt's reference to the sent message, for an outcome update.

    Raises:
        SendFailed: permanent; the receipt names no message (``no {what} to update``).
    """
    value = receipt.get(key)
    if not value:
        raise SendFailed(channel, f"no {what} to update", retryable=False)
    return value


def in_transit(channel: str, label: str) -> Callable[[str, bool], SendFailed]:
    """What ``map_httpx_errors`` raises for a request to ``label`` (a method, a path)."""

    def failure(reason: str, retryable: bool) -> SendFailed:
        return SendFailed(channel, f"{label}: {reason}", retryable=retryable)

    return failure


def numbered(options: Sequence[str]) -> str:
    """A question's options as a numbered list, one a line: ``1. Checking``."""
    return "\n".join(f"{i + 1}. {option}" for i, option in enumerate(options))
