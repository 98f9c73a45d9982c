"""The webhook channel: a JSON POST signed per the Standard Webhooks spec.

The body is ``Notification.wire()`` — with ``approveUrl`` / ``denyUrl`` /
``answerUrl`` / ``linkUrl`` when the notification has them, so a receiver can
act. Headers: ``webhook-id`` (the channel's idempotency key
``<runId>:<subject>:<channel>``: Standard Webhooks wants it unique per message
and the same on every retry, so two channels pointed at one receiver stay two
messages), ``webhook-timestamp`` (this attempt, epoch seconds) and
``webhook-signature`` (``v1,<base64 HMAC-SHA256>`` of ``id.timestamp.body``),
signed by the maintained ``standardwebhooks`` library. Beside them,
``Idempotency-Key`` carries the notification's channel-independent key
(``notification_key``: ``<runId>:<approvalId>`` for an approval), the same on
every retry and every channel, for a receiver that drops a notification it
already has rather than a repeated Standard Webhooks message. It is outside
the signature, as the spec's own headers other than ``webhook-id`` are; a
receiver that verified the signature has a request from this deployment, and
TLS keeps the header as sent.

The secret is a ``whsec_<base64 key>`` value, as Standard Webhooks issues them.
Any other value is taken as a raw secret whose UTF-8 bytes are the key; a
receiver then verifies with ``whsec_`` + base64 of those bytes (``whsec_form``).

Redirects are never followed, and before each send the host is resolved and
every address checked against private, loopback and link-local ranges (unless
the deployment allows them). The request then goes to the checked address, so a
second DNS answer cannot swap in an internal one between check and connect.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import socket
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Self
from urllib.parse import urlsplit

import httpx
from standardwebhooks.webhooks import Webhook

from signoff.channels.addresses import address_problem, private_webhooks_allowed
from signoff.channels.base import Delivery
from signoff.channels.notification import notification_key
from signoff.errors import SecretMissing, SendFailed, StoreUnavailable
from signoff.http_errors import RETRYABLE, map_httpx_errors, retry_after

if TYPE_CHECKING:
    from signoff.channels.build import BuildContext
    from signoff.channels.notification import Notification
    from signoff.channels.settings.webhook import WebhookSettings
    from signoff.clock import Clock

__all__ = [
    "IDEMPOTENCY_HEADER",
    "SECRET_PREFIX",
    "Resolver",
    "WebhookChannel",
    "resolve_host",
    "signing_key",
    "whsec_form",
]

SECRET_PREFIX: Final = "whsec_"  # noqa: S105 - the spec's prefix, not a secret
IDEMPOTENCY_HEADER: Final = "idempotency-key"

# (host, port) → the addresses it resolves to; raises OSError when it cannot.
Resolver = Callable[[str, int], Sequence[str]]


def resolve_host(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, through the system resolver.

    Raises:
        OSError: the name does not resolve.
    """
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    # sockaddr[0] is the address for both IPv4 and IPv6; dict keeps the order, once each.
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def signing_key(secret: str) -> bytes:
    """The HMAC key of ``secret``: the base64 after ``whsec_``, else the secret's UTF-8 bytes.

    Raises:
        ValueError: a ``whsec_`` value that is not base64, or an empty key.
    """
    if secret.startswith(SECRET_PREFIX):
        encoded = secret.removeprefix(SECRET_PREFIX)
        try:
            key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except binascii.Error as exc:
            raise ValueError("the part after whsec_ is not base64") from exc
    else:
        key = secret.encode("utf-8")
    if not key:
        raise ValueError("the signing key is empty")
    return key


def whsec_form(secret: str) -> str:
    """``secret`` as a receiver's ``standardwebhooks`` library takes it (``whsec_<base64>``).

    Raises:
        ValueError: as ``signing_key``.
    """
    return SECRET_PREFIX + base64.b64encode(signing_key(secret)).decode("ascii")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class WebhookChannel:
    """POSTs each notification, signed, to one URL."""

    def __init__(
        self,
        name: str,
        url: str,
        signing_secret: str | Callable[[], str],
        *,
        client: httpx.Client,
        allow_private: bool,
        clock: Clock,
        resolver: Resolver = resolve_host,
    ) -> None:
        """``signing_secret`` is the secret, or a function returning its current value.

        A function is called at each send, so a rotated secret reaches a warm
        function without a restart (the secret source caches it).
        """
        self.name = name
        self.url = url
        self.allow_private = allow_private
        self._url = httpx.URL(url)
        self._secret = signing_secret
        self._client = client
        self._clock = clock
        self._resolve = resolver

    @classmethod
    def from_config(
        cls,
        settings: WebhookSettings,
        context: BuildContext,
        *,
        name: str = "webhook",
    ) -> Self:
        """The channel ``channels.yaml`` describes; its secret is read at each send."""
        secret_name = settings.secret.secret
        secrets = context.secrets
        return cls(
            name,
            settings.url,
            lambda: secrets.get(secret_name),
            client=context.http(),
            allow_private=settings.allow_private or private_webhooks_allowed(),
            clock=context.clock,
        )

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """POST ``notification`` with ``idempotency_key`` as its ``webhook-id``.

        Its ``Idempotency-Key`` is the notification's key derived from it. ``previous`` is
        not needed: the receiver drops a repeated ``webhook-id`` / ``Idempotency-Key``.

        Raises:
            SendFailed: refused target, redirect or 4xx (permanent); 408, 429, 5xx,
                timeout or connection failure (retryable).
        """
        targets = self._targets()
        body = json.dumps(notification.wire(), ensure_ascii=False, separators=(",", ":"))
        timestamp = int(self._clock.now().timestamp())
        signature = self._signer().sign(
            idempotency_key, datetime.fromtimestamp(timestamp, UTC), body
        )
        headers = {
            "content-type": "application/json",
            "webhook-id": idempotency_key,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signature,
            IDEMPOTENCY_HEADER: notification_key(
                idempotency_key, run_id=notification.run_id, channel=self.name
            ),
        }
        # Each checked address in turn, as a plain connect would try them: a host
        # with an unreachable IPv6 address still gets its IPv4 one.
        unreachable: list[str] = []
        last: httpx.HTTPError | None = None
        for url, target_headers, extensions in targets:
            with map_httpx_errors(self._in_transit):
                try:
                    response = self._client.post(
                        url,
                        content=body.encode("utf-8"),
                        headers={**target_headers, **headers},
                        follow_redirects=False,
                        extensions=extensions,
                    )
                except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                    # nothing was sent, so the next address is safe to try
                    unreachable.append(f"{url.host}: {type(exc).__name__}")
                    last = exc
                    continue
            return self._outcome(response)
        raise self._failed(
            f"could not connect ({', '.join(unreachable)})", retryable=True
        ) from last

    def _outcome(self, response: httpx.Response) -> Delivery:
        status = response.status_code
        if 200 <= status < 300:
            return Delivery()
        answered = f"the receiver answered {status} {response.reason_phrase}".rstrip()
        if 300 <= status < 400:
            location = urlsplit(response.headers.get("location", "")).hostname or "elsewhere"
            raise self._failed(
                f"{answered}, a redirect to {location}; redirects are not followed, "
                "so point the channel at the final URL",
                retryable=False,
                status=status,
            )
        if status in RETRYABLE:
            raise self._failed(
                answered,
                retryable=True,
                status=status,
                retry_after=retry_after(
                    response.headers, now=lambda: self._clock.now().timestamp()
                ),
            )
        raise self._failed(answered, retryable=False, status=status)

    def _targets(self) -> list[tuple[httpx.URL, dict[str, str], dict[str, Any]]]:
        """Where to connect: the URL with its host replaced by each checked address.

        Raises:
            SendFailed: the host does not resolve (retryable) or is refused (permanent).
        """
        url = self._url
        host = url.raw_host.decode("ascii")
        if not self.allow_private and url.scheme != "https":
            raise self._failed(
                "refused: a public webhook must use https (its body carries approve links)",
                retryable=False,
            )
        if _is_address(host):
            addresses: Sequence[str] = [host]
        else:
            port = url.port or (443 if url.scheme == "https" else 80)
            try:
                addresses = self._resolve(host, port)
            except OSError as exc:
                raise self._failed(f"{host} does not resolve ({exc})", retryable=True) from exc
            if not addresses:
                raise self._failed(f"{host} resolves to no address", retryable=True)
        if not self.allow_private:
            for address in addresses:
                problem = address_problem(address)
                if problem:
                    raise self._failed(
                        f"refused: {host} resolves to {problem}; private targets need "
                        "allowPrivate: true",
                        retryable=False,
                    )
        if _is_address(host):
            return [(url, {}, {})]
        # Connect to the addresses just checked, so a second DNS answer cannot swap
        # in another; Host and TLS (SNI, the certificate check) still use the name.
        host_header = {"host": url.netloc.decode("ascii")}
        extensions: dict[str, Any] = {"sni_hostname": host} if url.scheme == "https" else {}
        try:
            return [(url.copy_with(host=address), host_header, extensions) for address in addresses]
        except httpx.InvalidURL as exc:  # e.g. an IPv6 address with a zone id
            raise self._failed(f"{host} resolves to an unusable address", retryable=False) from exc

    def _signer(self) -> Webhook:
        """The signer for the secret's current value.

        Raises:
            SendFailed: the secret is missing or malformed (permanent), or the secret
                source failed transiently (retryable).
        """
        try:
            secret = self._secret() if callable(self._secret) else self._secret
        except SecretMissing as exc:
            raise self._failed(f"no signing secret: {exc}", retryable=False) from exc
        except StoreUnavailable as exc:
            raise self._failed(f"the signing secret is unavailable: {exc}", retryable=True) from exc
        try:
            return Webhook(signing_key(secret))
        except ValueError as exc:
            raise self._failed(f"the signing secret is unusable: {exc}", retryable=False) from exc

    def _in_transit(self, reason: str, retryable: bool) -> SendFailed:
        return self._failed(f"the request {reason}", retryable=retryable)

    def _failed(
        self,
        reason: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> SendFailed:
        return SendFailed(
            self.name, reason, retryable=retryable, status=status, retry_after=retry_after
        )
