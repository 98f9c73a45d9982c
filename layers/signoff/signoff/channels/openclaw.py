"""The OpenClaw channel: one isolated agent turn per notification, through the gateway's hooks.

``channels.yaml``::

    ops-openclaw: {type: openclaw, gatewayUrl: "https://claw.example.com",
                   token: {secret: openclaw-hooks}, agentId: ops,
                   channel: telegram, to: "-1001234567890"}

The channel POSTs ``<gatewayUrl><hooksPath>/agent`` (``hooksPath`` is the
gateway's ``hooks.path``, ``/hooks`` by default) with the hook token as
``Authorization: Bearer`` — the gateway refuses a token in the query string
(400) — and the notification's key as ``Idempotency-Key`` (``<runId>:<approvalId>``,
the same on every retry). The body is what the gateway's hooks endpoint takes:
``message`` (the notification as text: for an approval or a question the
decision card — summary, request, why it asks — and its confirmation page's
link), ``name``, and from the channel's settings ``agentId``, ``deliver``,
``channel`` and ``to``; with ``sessionKeys: true`` (the gateway must set
``hooks.allowRequestSessionKey``) a ``sessionKey`` stable per run, so a run's
notifications share one OpenClaw session.

What the gateway does with it, as read in OpenClaw's source
(github.com/openclaw/openclaw at 00ced49d92d6852c4047cdd28702943521a930bc,
``src/gateway/server-http.ts`` ``createHooksRequestHandler`` and
``src/gateway/hooks.ts``): a ``token`` query parameter is 400, another method
405, a wrong token 401 (429 with ``Retry-After`` after 20 failures a minute
from one client), no hook path 404, a body over ``hooks.maxBodyBytes`` (256 KiB)
413, a body read timeout 408, bad JSON or fields 400 (``message required``, a
``channel`` that names no channel plug-in, an ``agentId`` outside
``hooks.allowedAgentIds``, a ``sessionKey`` the policy refuses); a dispatched
run answers 200 ``{ok, runId}``. A repeat of the same token, ``Idempotency-Key``
and fields within the replay window (5 minutes, 1,000 entries, in the gateway's
memory) answers the first run's id and starts nothing. Later versions of the
handler (``src/gateway/server/hooks-request-handler.ts``) also refuse an
unknown ``agentId`` (400) and answer a run that could not be admitted 409, 502
or 503, leaving it retryable. So: 2xx delivered; 408, 409, 429 and 5xx
retryable; every other status, and a redirect, permanent.

The message must be the same bytes on every retry for that replay to hold: it is
drawn from the notification alone (the card's times as of the request, never
"in 3 hours" as of the send). The gateway URL is guarded as a webhook's target
is: https and public unless ``allowPrivate`` (a gateway on a tailnet), every
address checked at each send and connected to as checked, redirects never
followed, so the token is sent only where the settings say.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Self

import httpx

from signoff.approver.card import clip
from signoff.approver.display import visible
from signoff.channels._chat import in_transit, numbered
from signoff.channels.addresses import (
    checked_address,
    private_webhooks_allowed,
    public_url_problem,
)
from signoff.channels.base import Delivery, already_sent
from signoff.channels.notification import notification_key
from signoff.channels.settings.openclaw import DEFAULT_HOOKS_PATH, INSTRUCTIONS
from signoff.channels.webhook import Resolver, resolve_host
from signoff.errors import SecretMissing, SendFailed, StoreUnavailable
from signoff.http_errors import RETRYABLE, map_httpx_errors, retry_after

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.channels.build import BuildContext
    from signoff.channels.notification import Notification
    from signoff.channels.settings.openclaw import OpenClawSettings
    from signoff.clock import Clock

__all__ = [
    "DEFAULT_HOOKS_PATH",
    "INSTRUCTIONS",
    "HookRoute",
    "OpenClawChannel",
    "gateway_key",
    "render_message",
]

USER_AGENT: Final = "signoff-notifier"
# The gateway ignores an Idempotency-Key longer than this (and then dedupes nothing).
_KEY_MAX: Final = 256
# Far below the gateway's default body limit (256 KiB), and more than a card needs.
_MESSAGE_MAX: Final = 24_000
_ERROR_MAX: Final = 200
# 409: a run the gateway could not admit (its session changed); it caches no
# replay for it, so the same request may be admitted next time.
_RETRYABLE: Final = RETRYABLE | {409}


@dataclass(frozen=True, kw_only=True)
class HookRoute:
    """Where the gateway runs and delivers: the body's fields besides ``message``."""

    name: str = "signoff"
    agent_id: str | None = None
    deliver: bool | None = None
    channel: str | None = None
    to: str | None = None
    # None: the gateway picks a fresh session per call; else the run id is appended.
    session_key_prefix: str | None = None

    def fields(self, run_id: str) -> dict[str, Any]:
        """The body's routing fields for a notification of ``run_id``; unset ones left out."""
        body: dict[str, Any] = {"name": self.name}
        optional = {
            "agentId": self.agent_id,
            "deliver": self.deliver,
            "channel": self.channel,
            "to": self.to,
        }
        body |= {key: value for key, value in optional.items() if value is not None}
        if self.session_key_prefix is not None:
            body["sessionKey"] = f"{self.session_key_prefix}{run_id}"
        return body


class OpenClawChannel:
    """Starts one OpenClaw agent turn per notification, through the gateway's hooks."""

    def __init__(
        self,
        name: str,
        gateway_url: str,
        token: str | Callable[[], str],
        *,
        client: httpx.Client,
        clock: Clock,
        hooks_path: str = DEFAULT_HOOKS_PATH,
        route: HookRoute | None = None,
        instructions: str = INSTRUCTIONS,
        allow_private: bool = False,
        resolver: Resolver = resolve_host,
    ) -> None:
        """``token`` is the hook token, or a function returning its current value (per send)."""
        self.name = name
        self.allow_private = allow_private
        self.route = route or HookRoute()
        self.instructions = instructions
        self._url = httpx.URL(f"{gateway_url.rstrip('/')}{hooks_path}/agent")
        self._token = token
        self._client = client
        self._clock = clock
        self._resolve = resolver

    @classmethod
    def from_config(
        cls, settings: OpenClawSettings, context: BuildContext, *, name: str = "openclaw"
    ) -> Self:
        """The channel ``channels.yaml`` describes; its token is read at each send.

        Raises:
            ValueError: a plain-http or literal private ``gatewayUrl`` without ``allowPrivate``.
        """
        allow_private = settings.allow_private or private_webhooks_allowed()
        if not allow_private and (problem := public_url_problem(settings.gateway_url)):
            raise ValueError(f"gatewayUrl: {problem}")
        secrets, token_name = context.secrets, settings.token.secret
        route = HookRoute(
            name=settings.hook_name,
            agent_id=settings.agent_id,
            deliver=settings.deliver,
            channel=settings.channel,
            to=settings.to,
            session_key_prefix=settings.session_key_prefix if settings.session_keys else None,
        )
        return cls(
            name,
            settings.gateway_url,
            lambda: secrets.get(token_name),
            client=context.http(),
            clock=context.clock,
            hooks_path=settings.hooks_path,
            route=route,
            instructions=settings.instructions,
            allow_private=allow_private,
        )

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Start the turn for ``notification``, unless ``previous`` shows one was started.

        Its ``Idempotency-Key`` is the notification's key; a retry within
        the gateway's replay window gets the first run back instead of a second one.

        Raises:
            SendFailed: 400, 401, 403, 404, 405, 413, a redirect or a refused gateway
                URL (permanent); 408, 409, 429, 5xx, a timeout or a connection failure
                (retryable).
        """
        # A recorded run id IS the notification; only its record was lost.
        if already_sent(previous, "runId"):
            return previous
        body = {
            "message": render_message(notification, instructions=self.instructions),
            **self.route.fields(notification.run_id),
        }
        key = notification_key(idempotency_key, run_id=notification.run_id, channel=self.name)
        headers = {
            "Authorization": f"Bearer {self._bearer()}",
            "Content-Type": "application/json; charset=utf-8",
            "Idempotency-Key": gateway_key(key),
            "User-Agent": USER_AGENT,
        }
        url, extensions = self._target(headers)
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        with map_httpx_errors(in_transit(self.name, f"POST {self._url.path}")):
            response = self._client.post(
                url,
                content=content,
                headers=headers,
                follow_redirects=False,
                extensions=extensions,
            )
        return self._outcome(response)

    def _bearer(self) -> str:
        """The hook token's current value.

        Raises:
            SendFailed: missing (permanent) or the source failed transiently (retryable).
        """
        try:
            return self._token() if callable(self._token) else self._token
        except SecretMissing as exc:
            raise self._failed(f"no hook token: {exc}", retryable=False) from exc
        except StoreUnavailable as exc:
            raise self._failed(f"the hook token is unavailable: {exc}", retryable=True) from exc

    def _target(self, headers: dict[str, str]) -> tuple[httpx.URL, dict[str, Any]]:
        """The URL to connect to, its host replaced by the checked address (``headers``
        gain the original ``Host``), and the request's extensions (TLS's SNI)."""
        url = self._url
        if self.allow_private:
            return url, {}
        address = checked_address(
            self.name,
            scheme=url.scheme,
            host=url.host,
            port=url.port,
            resolve=self._resolve,
            setting="gatewayUrl",
            kind="gateway URLs",
        )
        if address is None:
            return url, {}
        # Connect to the address just checked; Host and TLS (SNI, the certificate
        # check) still use the name, so a second DNS answer cannot swap in another.
        headers["Host"] = url.netloc.decode("ascii")
        try:
            return url.copy_with(host=address), {"sni_hostname": url.host}
        except httpx.InvalidURL as exc:  # e.g. an IPv6 address with a zone id
            raise self._failed(
                f"{url.host} resolves to an unusable address", retryable=False
            ) from exc

    def _outcome(self, response: httpx.Response) -> Delivery:
        status = response.status_code
        if 200 <= status < 300:
            run_id = _answer(response).get("runId")
            return Delivery(receipt={"runId": run_id} if isinstance(run_id, str) and run_id else {})
        answered = f"the gateway answered {status} {response.reason_phrase}".rstrip()
        said = _said(response)
        if said:
            answered += f": {said}"
        if 300 <= status < 400:
            raise self._failed(
                f"{answered}; redirects are not followed, so point gatewayUrl at the gateway",
                retryable=False,
                status=status,
            )
        if status in _RETRYABLE:
            wait = retry_after(response.headers, now=lambda: self._clock.now().timestamp())
            raise self._failed(answered, retryable=True, status=status, wait=wait)
        raise self._failed(f"{answered}{_HINTS.get(status, '')}", retryable=False, status=status)

    def _failed(
        self, reason: str, *, retryable: bool, status: int | None = None, wait: float | None = None
    ) -> SendFailed:
        return SendFailed(self.name, reason, retryable=retryable, status=status, retry_after=wait)


# What an operator changes for a permanent answer of the gateway's hooks handler.
_HINTS: Final = {
    401: " (the token is not the gateway's hooks.token)",
    404: " (hooks are off on the gateway, or hooksPath is not its hooks.path)",
    413: " (the message is over the gateway's hooks.maxBodyBytes)",
}


def gateway_key(key: str) -> str:
    """``key`` as the gateway keeps it: itself, or a digest when it is over 256 characters.

    The gateway ignores a longer ``Idempotency-Key`` altogether; the digest is as
    stable across retries as the key.
    """
    if len(key) <= _KEY_MAX:
        return key
    return "signoff-sha256:" + hashlib.sha256(key.encode()).hexdigest()


def render_message(notification: Notification, *, instructions: str = INSTRUCTIONS) -> str:
    """The hook's ``message``: what the notification says, as plain text, the link last.

    An approval or a question composed from its item is its decision card (the
    summary, the request, what the agent said, why it asks, for whom, when it
    expires, the arguments), drawn as of the request so every retry sends the
    same text; the link is its confirmation page, whose GET decides nothing. The
    other kinds are their title and body, as the chat channels send them.
    Hidden characters are shown escaped (``signoff.approver.display``).
    """
    parts: list[str] = [notification.title]
    card = notification.card() if notification.summary and notification.requested_at else None
    if card is not None:
        parts.append(card.text(card.requested_at, arguments=card.kind == "approval"))
    elif notification.kind == "question":
        parts.append(notification.question or notification.body)
        if notification.options:
            parts.append(numbered(notification.options))
    elif notification.body:
        parts.append(notification.body)
    if notification.note:
        parts.append(notification.note)
    text = clip(visible("\n\n".join(p.strip() for p in parts if p.strip())), _MESSAGE_MAX)
    head = f"{instructions.strip()}\n\n" if instructions.strip() else ""
    link = _link_line(notification)
    return f"{head}{text}\n\n{link}" if link else f"{head}{text}"


def _link_line(notification: Notification) -> str | None:
    link = notification.link_url
    if not link or notification.kind not in ("approval", "question"):
        return None
    verb = "Decide" if notification.kind == "approval" else "Answer"
    return f"{verb} here: {link}"


def _answer(response: httpx.Response) -> dict[str, Any]:
    try:
        answer = response.json()
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def _said(response: httpx.Response) -> str:
    """The gateway's own reason for a refusal (its ``{ok: false, error}``), short.

    Only that shape is quoted: a proxy in front of the gateway may echo the request,
    and the request's message holds a link with a resume token, which no log may.
    """
    answer = _answer(response)
    error = answer.get("error")
    if answer.get("ok") is not False or not isinstance(error, str):
        return ""
    return clip(visible(" ".join(error.split()), lines=False), _ERROR_MAX)
