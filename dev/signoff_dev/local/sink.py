"""The local webhook sink: where the sample channel's signed notifications land on a laptop.

``POST /_local/webhook`` verifies the Standard Webhooks signature with the
channel's secret (401 when it does not verify, as a real receiver would),
prints the notification with the links a person acts on, and keeps it;
``GET /_local/notifications`` lists what arrived as JSON, oldest first. A
repeated ``webhook-id`` (a retried send) is kept and marked ``duplicate``, so a
test can count deliveries per notification.

``agents/channels.yaml`` points the ``local-webhook`` channel at
``http://127.0.0.1:3000/_local/webhook``; ``sink_channels`` finds every webhook
channel aimed at a loopback ``/_local/`` path so the stack can aim it at the
port it actually listens on.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from signoff.channels.notification import Notification
from signoff.channels.settings.webhook import WebhookSettings
from signoff_dev.local.gateway import HttpRequest, HttpResponse

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from signoff.channels.base import Channel
    from signoff.channels.config import ChannelsConfig

__all__ = [
    "LIST_PATH",
    "SINK_PATH",
    "NotificationSink",
    "Received",
    "describe",
    "notification_of",
    "sink_channels",
    "sink_webhooks",
]

SINK_PATH: Final = "/_local/webhook"
LIST_PATH: Final = "/_local/notifications"
_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class Received:
    """One verified delivery."""

    webhook_id: str
    received_at: str
    notification: dict[str, Any]
    duplicate: bool

    @property
    def sent(self) -> Notification | None:
        """The delivery's notification, read as the webhook channel wrote it."""
        return notification_of(self.notification)

    def wire(self) -> dict[str, Any]:
        return {
            "webhookId": self.webhook_id,
            "receivedAt": self.received_at,
            "duplicate": self.duplicate,
            "notification": self.notification,
        }


def notification_of(body: Mapping[str, Any]) -> Notification | None:
    """A delivered body (``Notification.wire()``, the webhook's JSON) read back into its
    model; None for a body that is not one."""
    try:
        return Notification.model_validate(body)
    except ValidationError:
        return None


def sink_channels(config: ChannelsConfig, base_url: str) -> dict[str, WebhookSettings]:
    """The webhook channels aimed at a loopback ``/_local/`` path, re-aimed at ``base_url``."""
    found: dict[str, WebhookSettings] = {}
    base = urlsplit(base_url)
    for name, settings in config.channels.items():
        if not isinstance(settings, WebhookSettings):
            continue
        url = urlsplit(settings.url)
        if (url.hostname or "") in _LOOPBACK and url.path.startswith("/_local/"):
            moved = urlunsplit((base.scheme, base.netloc, url.path, url.query, ""))
            found[name] = settings.model_copy(update={"url": moved})
    return found


def sink_webhooks(config: ChannelsConfig, base_url: str) -> dict[str, Channel]:
    """The sink's webhook channels, built as the notifier builds them but aimed at ``base_url``."""
    from signoff.aws.channels import deployment_secrets
    from signoff.channels.build import BuildContext, build_channel

    context = BuildContext(secrets=deployment_secrets(config))
    return {
        name: build_channel(name, settings, context)
        for name, settings in sink_channels(config, base_url).items()
    }


def describe(notification: dict[str, Any]) -> list[str]:
    """A notification as console lines: what is asked, then each link."""
    kind = notification.get("kind", "?")
    head = f"{kind} · {notification.get('agent', '?')} · {notification.get('title', '')}"
    lines = [head.rstrip(" ·")]
    if notification.get("tool"):
        args = json.dumps(notification.get("args") or {}, ensure_ascii=False)
        lines.append(f"  tool     {notification['tool']} {args}")
    if notification.get("question"):
        options = notification.get("options") or []
        suffix = f"  [{' / '.join(options)}]" if options else ""
        lines.append(f"  question {notification['question']}{suffix}")
    links = (
        ("open", "linkUrl", "in a browser: the page to decide on"),
        ("approve", "approveUrl", "POST"),
        ("deny", "denyUrl", "POST"),
        ("answer", "answerUrl", "POST"),
    )
    for label, key, how in links:
        if notification.get(key):
            lines.append(f"  {label:<8} {notification[key]}  ({how})")
    return lines


class NotificationSink:
    """Verifies, prints and keeps what the local webhook channels send."""

    def __init__(self, keys: Iterable[str], *, printer: Callable[[str], None]) -> None:
        """``keys`` are the channels' ``whsec_`` secrets; a delivery must verify under one."""
        self._verifiers = [Webhook(key) for key in keys]
        self._print = printer
        self._received: list[Received] = []
        self._lock = threading.Lock()

    def received(self) -> list[Received]:
        """Every verified delivery so far, oldest first."""
        with self._lock:
            return list(self._received)

    def routes(self) -> dict[tuple[str, str], Callable[[HttpRequest], HttpResponse]]:
        """The sink's local-only routes, for the gateway."""
        return {("POST", SINK_PATH): self.receive, ("GET", LIST_PATH): self.listing}

    def listing(self, _: HttpRequest) -> HttpResponse:
        return HttpResponse.json(200, {"notifications": [r.wire() for r in self.received()]})

    def receive(self, request: HttpRequest) -> HttpResponse:
        """One delivery: 204 when its signature verifies, 401 when it does not."""
        headers = {name.lower(): value for name, value in request.headers}
        payload = self._verified(request.body, headers)
        if payload is None:
            self._print("webhook sink: refused a delivery whose signature does not verify")
            return HttpResponse.json(401, {"error": "invalid_signature"})
        webhook_id = headers.get("webhook-id", "")
        with self._lock:
            duplicate = any(r.webhook_id == webhook_id for r in self._received)
            self._received.append(
                Received(
                    webhook_id=webhook_id,
                    received_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
                    notification=payload,
                    duplicate=duplicate,
                )
            )
        lines = describe(payload)
        if duplicate:
            lines[0] += "  (a repeat of a delivery already received)"
        self._print("\n".join(["notification " + lines[0], *lines[1:]]))
        return HttpResponse(204, [])

    def _verified(self, body: bytes, headers: dict[str, str]) -> dict[str, Any] | None:
        for verifier in self._verifiers:
            try:
                payload = verifier.verify(body, headers)
            except WebhookVerificationError:
                continue
            if isinstance(payload, dict):
                return payload
        return None
