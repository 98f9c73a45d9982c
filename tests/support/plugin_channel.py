"""A third-party channel as a plug-in author writes it: its class, settings model and service.

Named by ``type: python`` (``class: "tests.support.plugin_channel:InboxChannel"``)
or installed through a ``signoff.channels`` entry point by the tests. Its
"service" is an in-process inbox, found by the ``inbox`` option, that keeps one
message per idempotency key (a transport that dedupes) and can be scripted to
refuse the next sends.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field

from signoff.channels.base import Delivery
from signoff.errors import SendFailed

if TYPE_CHECKING:
    from signoff.channels.notification import Notification

INBOXES: dict[str, Inbox] = {}


class Inbox:
    """The plug-in's service: delivered keys in order, each once, and scripted refusals."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.titles: list[str] = []
        self.failures: list[bool] = []
        self.lock = threading.Lock()


class InboxOptions(BaseModel):
    """The plug-in's own settings model: its ``options`` in channels.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    inbox: str = Field(min_length=1)
    prefix: str = ""


class InboxChannel:
    """A channel delivering into ``INBOXES[options.inbox]``, once per idempotency key."""

    settings_model: ClassVar[type[BaseModel]] = InboxOptions

    def __init__(self, name: str, inbox: Inbox, prefix: str) -> None:
        self.name = name
        self.inbox = inbox
        self.prefix = prefix

    @classmethod
    def from_config(cls, options: InboxOptions, context: Any, *, name: str) -> Self:
        return cls(name, INBOXES.setdefault(options.inbox, Inbox()), options.prefix)

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        with self.inbox.lock:
            if self.inbox.failures:
                retryable = self.inbox.failures.pop(0)
                raise SendFailed(self.name, "inbox refused", retryable=retryable)
            if idempotency_key not in self.inbox.keys:  # the service dedupes by key
                self.inbox.keys.append(idempotency_key)
                self.inbox.titles.append(self.prefix + notification.title)
        return Delivery(receipt={"key": idempotency_key})


class PendingQueueChannel(InboxChannel):
    """A row or queue backend as a plug-in: approvals only."""

    approval_only: ClassVar[bool] = True


class NotAChannel:
    """A class with no ``notify``: refused when channels.yaml is loaded."""

    @classmethod
    def from_config(cls, options: Any, context: Any, *, name: str) -> NotAChannel:
        return cls()


class BrokenAtBuild:
    """A channel whose ``from_config`` fails (a missing secret, say): only its rows fail."""

    @classmethod
    def from_config(cls, options: dict[str, Any], context: Any, *, name: str) -> BrokenAtBuild:
        raise ValueError("the inbox server is not configured")

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        raise AssertionError("never built")
