"""The GitHub channel: a comment on one issue or pull request, once per notification.

``channels.yaml``::

    ops-github: {type: github, repository: acme/payments, issue: 42,
                 token: {secret: github-token}}

The repository and number come from the channel's settings (a notification
carries no routing metadata). The token is a personal access token or a GitHub
App installation token, read from the secret source at each send so a rotated
(hourly, for an installation) token reaches a warm function; the App's JWT
exchange is not done here. ``apiUrl`` points at GitHub Enterprise
(``https://ghe.example.com/api/v3``).

GitHub has no idempotency key for ``POST …/comments``, so the channel makes its
own: each comment starts with a hidden marker ``<!-- signoff:<key> -->`` (``key``
the row's channel key, so two channels on one issue never take each other's
comment). Before posting, it lists the issue's comments created since the row
was (``since``, bounded pages, newest first) and adopts a comment that starts
with its marker instead of posting: a crash between the post and its record
leaves one comment. An approval or question links its confirmation page
(``linkUrl``), never the one-click approve/deny routes: a comment is read by
everyone with access to the repository, and a GET of that page decides nothing.

The API URL is guarded as a webhook's is: https only, and every address its host
resolves to checked against private, loopback and link-local ranges unless
``allowPrivate`` (or the deployment) allows them; requests go to the checked
address, never follow redirects, and never follow a URL from a response, so the
token is sent only where the settings say.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal, Self

import httpx
from pydantic import Field

from signoff.channels._chat import in_transit
from signoff.channels.base import Delivery, already_sent
from signoff.channels.config import (
    ChannelSettings,
    HttpUrl,
    Secret,
    address_problem,
    private_webhooks_allowed,
)
from signoff.channels.webhook import Resolver, resolve_host
from signoff.display import visible
from signoff.errors import SecretMissing, SendFailed, StoreUnavailable
from signoff.http_errors import RETRYABLE, map_httpx_errors, retry_after

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from signoff.channels.build import BuildContext
    from signoff.channels.notification import Notification
    from signoff.clock import Clock

__all__ = ["API_VERSION", "GITHUB_API", "GitHubChannel", "GitHubSettings", "marker", "render"]

GITHUB_API: Final = "https://api.github.com"
API_VERSION: Final = "2022-11-28"
USER_AGENT: Final = "signoff-notifier"
# The lookup reads comments created since the row was, less a margin for the
# clocks of GitHub and this process, 100 a page, at most this many pages.
_PER_PAGE: Final = 100
_MAX_PAGES: Final = 10
_CLOCK_MARGIN: Final = 300.0
_BODY_MAX: Final = 65536  # GitHub refuses a longer comment body
_LAST_PAGE: Final = re.compile(r'[?&]page=(\d+)[^>]*>;\s*rel="last"')
# Markdown that model-written text could use to format, link, hide or ping.
_MARKDOWN: Final = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


class GitHubSettings(ChannelSettings):
    """A comment on ``issue`` (an issue or pull request number) of ``repository``."""

    type: Literal["github"]
    repository: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")
    issue: int = Field(ge=1)
    token: Secret
    api_url: HttpUrl = GITHUB_API
    allow_private: bool = False


def marker(key: str) -> str:
    """The hidden first line of the comment sent with the channel key ``key``."""
    # "--" would end the HTML comment early; keys are ids and channel names, so
    # this never changes a real key, only keeps a strange one inside the comment.
    return f"<!-- signoff:{key.replace('--', '-&#45;')} -->"


class GitHubChannel:
    """Comments each notification on one issue, looking for its marker first."""

    def __init__(
        self,
        name: str,
        repository: str,
        issue: int,
        token: str | Callable[[], str],
        *,
        client: httpx.Client,
        clock: Clock,
        api_url: str = GITHUB_API,
        allow_private: bool = False,
        resolver: Resolver = resolve_host,
    ) -> None:
        """``token`` is the token, or a function returning its current value (read per send)."""
        self.name = name
        self.repository = repository
        self.issue = issue
        self.allow_private = allow_private
        self._token = token
        self._client = client
        self._clock = clock
        self._api = httpx.URL(api_url.rstrip("/"))
        self._resolve = resolver

    @classmethod
    def from_config(
        cls, settings: GitHubSettings, context: BuildContext, *, name: str = "github"
    ) -> Self:
        """The channel ``channels.yaml`` describes; its token is read at each send.

        Raises:
            ValueError: a plain-http or literal private ``apiUrl`` without ``allowPrivate``.
        """
        allow_private = settings.allow_private or private_webhooks_allowed()
        if not allow_private:
            _check_public_url(settings.api_url)
        secret_name, secrets = settings.token.secret, context.secrets
        return cls(
            name,
            settings.repository,
            settings.issue,
            lambda: secrets.get(secret_name),
            client=context.http(),
            clock=context.clock,
            api_url=settings.api_url,
            allow_private=allow_private,
        )

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Comment ``notification`` unless a comment with its marker exists already.

        Raises:
            SendFailed: 401, 403, 404, 422, a refused API URL or a redirect
                (permanent); 408, 429, 5xx, a rate limit, a timeout or a
                connection failure (retryable).
        """
        # A recorded comment id IS the notification; only its record was lost.
        if already_sent(previous, "commentId"):
            return previous
        session = _Session(self, self._token_value())
        now = self._clock.now().timestamp()
        since = previous.unconfirmed_since if previous is not None else None
        found = session.find(marker(idempotency_key), (since or now) - _CLOCK_MARGIN)
        if found is not None:
            return found
        posted = session.call(
            "POST", self._comments_path(), body={"body": render(notification, idempotency_key)}
        )
        comment_id = posted.get("id") if isinstance(posted, dict) else None
        if not isinstance(comment_id, int):
            # 201 means the comment exists; posting again would make a second one.
            raise SendFailed(self.name, "the comment was created without an id", retryable=False)
        return _receipt(posted)

    def _comments_path(self) -> str:
        return f"/repos/{self.repository}/issues/{self.issue}/comments"

    def _token_value(self) -> str:
        try:
            return self._token() if callable(self._token) else self._token
        except SecretMissing as exc:
            raise SendFailed(self.name, f"no token: {exc}", retryable=False) from exc
        except StoreUnavailable as exc:
            raise SendFailed(self.name, f"the token is unavailable: {exc}", retryable=True) from exc

    def failed(
        self,
        reason: str,
        *,
        retryable: bool,
        status: int | None = None,
        wait: float | None = None,
    ) -> SendFailed:
        """The channel's ``SendFailed``."""
        return SendFailed(self.name, reason, retryable=retryable, status=status, retry_after=wait)


class _Session:
    """One send's requests: the API host resolved and checked once, the token in hand."""

    def __init__(self, channel: GitHubChannel, token: str) -> None:
        self._channel = channel
        self._headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": USER_AGENT,
        }
        self._address = _checked_address(channel)

    def find(self, wanted: str, since: float) -> Delivery | None:
        """The receipt of the issue's comment that starts with ``wanted``, if any.

        Reads the comments updated since ``since``: page 1, then the others from
        the newest (the list is oldest first), at most ``_MAX_PAGES`` in all.

        Raises:
            SendFailed: the list could not be read (a transient failure retries the
                whole send rather than risk a second comment).
        """
        stamp = datetime.fromtimestamp(max(since, 0.0), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        path = self._channel._comments_path()
        pages: list[int] = [1]
        read = 0
        while pages and read < _MAX_PAGES:
            page = pages.pop(0)
            params = {"per_page": str(_PER_PAGE), "since": stamp, "page": str(page)}
            comments, links = self.call_listing(path, params)
            read += 1
            for comment in comments:
                body = comment.get("body") if isinstance(comment, dict) else None
                if isinstance(body, str) and body.startswith(wanted):
                    return _receipt(comment)
            if page == 1:
                last = _last_page(links)
                pages = list(range(last, 1, -1))
        return None

    def call_listing(self, path: str, params: dict[str, str]) -> tuple[list[Any], str]:
        """A list answer and its ``Link`` header."""
        answer, response = self._send("GET", path, params=params)
        if not isinstance(answer, list):
            raise self._channel.failed(f"GET {path}: unreadable answer", retryable=True)
        return answer, response.headers.get("link", "")

    def call(self, method: str, path: str, *, body: dict[str, Any]) -> Any:
        """The parsed answer of a write."""
        return self._send(method, path, body=body)[0]

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> tuple[Any, httpx.Response]:
        channel = self._channel
        api = channel._api
        url = api.copy_with(path=api.path.rstrip("/") + path, params=params)
        headers = dict(self._headers)
        extensions: dict[str, Any] = {}
        if self._address is not None:
            # Connect to the address just checked; Host and TLS (SNI, the certificate
            # check) still use the name, so a second DNS answer cannot swap in another.
            headers["Host"] = url.netloc.decode("ascii")
            if url.scheme == "https":
                extensions["sni_hostname"] = url.host
            url = url.copy_with(host=self._address)
        label = f"{method} {path}"
        content = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        if content is not None:
            headers["Content-Type"] = "application/json; charset=utf-8"
        with map_httpx_errors(in_transit(channel.name, label)):
            response = channel._client.request(
                method,
                url,
                content=content,
                headers=headers,
                follow_redirects=False,
                extensions=extensions,
            )
        _check_status(channel, label, response)
        try:
            return response.json(), response
        except ValueError as exc:
            raise channel.failed(
                f"{label}: unreadable answer", retryable=True, status=response.status_code
            ) from exc


def _check_status(channel: GitHubChannel, label: str, response: httpx.Response) -> None:
    """Nothing for a 2xx; else the ``SendFailed`` GitHub's answer means.

    A rate limit (primary: 403/429 with ``x-ratelimit-remaining: 0``, waiting
    until ``x-ratelimit-reset``; secondary: 403/429 with ``retry-after``) is
    retryable after that wait; 401 (bad token), 403 (no permission), 404 (no such
    repository or issue, or a token that may not see it) and 422 are permanent.
    """
    status = response.status_code
    if 200 <= status < 300:
        return
    answered = f"{label}: GitHub answered {status} {response.reason_phrase}".rstrip()
    headers = response.headers
    now = channel._clock.now().timestamp
    if status in (403, 429):
        wait = retry_after(headers, now=now)
        if wait is None and headers.get("x-ratelimit-remaining") == "0":
            wait = _until_reset(headers.get("x-ratelimit-reset"), now())
        if wait is not None:
            raise channel.failed(
                f"{answered} (rate limited)", retryable=True, status=status, wait=wait
            )
    if 300 <= status < 400:
        raise channel.failed(
            f"{answered}, a redirect; redirects are not followed (a renamed repository?)",
            retryable=False,
            status=status,
        )
    if status in RETRYABLE:
        raise channel.failed(
            answered, retryable=True, status=status, wait=retry_after(headers, now=now)
        )
    raise channel.failed(answered, retryable=False, status=status)


def _until_reset(reset: str | None, now: float) -> float | None:
    """Seconds until ``x-ratelimit-reset`` (an epoch time), if it is one."""
    try:
        moment = float(reset) if reset is not None else None
    except ValueError:
        return None
    return None if moment is None or not math.isfinite(moment) else max(0.0, moment - now)


def _checked_address(channel: GitHubChannel) -> str | None:
    """The address to connect to (None: connect to the URL as it is).

    Raises:
        SendFailed: the host does not resolve (retryable) or is refused (permanent).
    """
    url = channel._api
    host = url.host
    if channel.allow_private:
        return None
    if url.scheme != "https":
        raise channel.failed(
            "refused: apiUrl must use https (the token travels with every request)",
            retryable=False,
        )
    if _is_address(host):
        addresses = [host]
    else:
        try:
            addresses = list(channel._resolve(host, url.port or 443))
        except OSError as exc:
            raise channel.failed(f"{host} does not resolve ({exc})", retryable=True) from exc
        if not addresses:
            raise channel.failed(f"{host} resolves to no address", retryable=True)
    for address in addresses:
        problem = address_problem(address)
        if problem:
            raise channel.failed(
                f"refused: {host} resolves to {problem}; private API URLs need allowPrivate: true",
                retryable=False,
            )
    return None if _is_address(host) else addresses[0]


def _check_public_url(api_url: str) -> None:
    """Refuse, when the channel is built, what no send could use.

    Raises:
        ValueError: plain http, or a literal private address.
    """
    url = httpx.URL(api_url)
    if url.scheme != "https":
        raise ValueError("apiUrl must use https (or set allowPrivate: true)")
    if _is_address(url.host) and (problem := address_problem(url.host)):
        raise ValueError(f"apiUrl is {problem} (set allowPrivate: true to allow it)")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _last_page(links: str) -> int:
    match = _LAST_PAGE.search(links)
    return int(match.group(1)) if match else 1


def _receipt(comment: Any) -> Delivery:
    url = comment.get("html_url")
    receipt = {"commentId": str(comment["id"])}
    if isinstance(url, str):
        receipt["url"] = url
    return Delivery(receipt=receipt)


def render(notification: Notification, idempotency_key: str) -> str:
    """The comment's Markdown: marker, title, body, tool call, link, context.

    Text a model wrote is shown as it is: hidden characters as their escapes
    (``visible``), then Markdown and HTML neutralised, so it can neither format,
    link, hide text nor @-mention anyone. The marker is the first line, where no
    model-written text can stand, so a comment quoting a marker is never adopted.
    """
    parts = [marker(idempotency_key), f"### {_text(notification.title or notification.kind)}"]
    if notification.kind == "question":
        parts.append(_text(notification.question or notification.body))
        parts.extend(f"{i + 1}\\. {_text(o)}" for i, o in enumerate(notification.options or []))
    elif notification.body:
        parts.append(_text(notification.body))
    if notification.kind == "approval" and notification.tool:
        arguments = json.dumps(
            notification.args or {}, indent=2, sort_keys=True, ensure_ascii=False, default=str
        )
        parts.append(f"**Tool** {_code(notification.tool)}\n\n{_block(visible(arguments))}")
    if notification.note:
        parts.append(_text(notification.note))
    if notification.link_url:
        verb = "Review and decide" if notification.resume_token else "View"
        parts.append(f"[{verb}](<{notification.link_url}>)")
    context = [f"agent {_code(notification.agent)}", f"run {_code(notification.run_id)}"]
    if notification.expires_at:
        context.append(f"expires {_code(notification.expires_at)}")
    parts.append("<sub>" + " · ".join(context) + "</sub>")
    body = "\n\n".join(parts)
    return body if len(body) <= _BODY_MAX else body[: _BODY_MAX - 1] + "…"


def _text(text: str) -> str:
    # Markdown first, then the entities (whose "#" and "&" must stay as written).
    shown = _MARKDOWN.sub(r"\\\1", visible(text))
    return shown.replace("&", "&amp;").replace("<", "&lt;").replace("@", "&#64;")


def _code(text: str) -> str:
    """An inline code span that ``text`` cannot close."""
    shown = visible(text, lines=False)
    fence = "`" * (max((len(r) for r in re.findall(r"`+", shown)), default=0) + 1)
    return f"{fence} {shown} {fence}"


def _block(text: str) -> str:
    """A fenced code block that ``text`` cannot close."""
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}json\n{text}\n{fence}"
