"""The GitHub channel: a comment on one issue or pull request, once per notification.

``channels.yaml``::

    ops-github: {type: github, repository: acme/payments, issue: 42,
                 token: {secret: github-token}}

The repository and number come from the channel's settings (a notification
carries no routing metadata). ``token`` is a personal access token or an
installation token kept fresh elsewhere, read from the secret source at each
send so a rotated one reaches a warm function; or ``app`` names a GitHub App
installation whose token the channel exchanges for itself and keeps until
shortly before it expires (``channels/github/app.py``). ``apiUrl`` points at
GitHub Enterprise (``https://ghe.example.com/api/v3``).

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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Self

import httpx

from signoff.channels._chat import in_transit
from signoff.channels.addresses import (
    address_problem,
    checked_address,
    private_webhooks_allowed,
)
from signoff.channels.base import Delivery, already_sent
from signoff.channels.github.app import InstallationTokens, app_jwt, expiry
from signoff.channels.github.markdown import marker, render
from signoff.channels.settings.github import GITHUB_API
from signoff.channels.webhook import Resolver, resolve_host
from signoff.errors import SecretMissing, SendFailed, StoreUnavailable
from signoff.http_errors import RETRYABLE, map_httpx_errors, retry_after

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from signoff.channels.build import BuildContext
    from signoff.channels.notification import Notification
    from signoff.channels.settings.github import GitHubSettings
    from signoff.clock import Clock

__all__ = ["API_VERSION", "GITHUB_API", "GitHubChannel", "marker", "render"]

API_VERSION: Final = "2022-11-28"
USER_AGENT: Final = "signoff-notifier"
# The lookup reads comments created since the row was, less a margin for the
# clocks of GitHub and this process, 100 a page, at most this many pages.
_PER_PAGE: Final = 100
_MAX_PAGES: Final = 10
_CLOCK_MARGIN: Final = 300.0
_LAST_PAGE: Final = re.compile(r'[?&]page=(\d+)[^>]*>;\s*rel="last"')


@dataclass(frozen=True, kw_only=True)
class GitHubApp:
    """A GitHub App installation the channel authenticates as; the key is read per exchange."""

    app_id: str
    installation_id: int
    private_key: Callable[[], str]


class GitHubChannel:
    """Comments each notification on one issue, looking for its marker first."""

    def __init__(
        self,
        name: str,
        repository: str,
        issue: int,
        token: str | Callable[[], str] | None = None,
        *,
        app: GitHubApp | None = None,
        client: httpx.Client,
        clock: Clock,
        api_url: str = GITHUB_API,
        allow_private: bool = False,
        resolver: Resolver = resolve_host,
    ) -> None:
        """``token`` is the token, or a function returning its current value (read per send).

        Or ``app``: the installation token is then exchanged for and kept until
        shortly before it expires.
        """
        if (token is None) == (app is None):
            raise ValueError("a GitHub channel needs a token or an App, not both")
        self.name = name
        self.repository = repository
        self.issue = issue
        self.allow_private = allow_private
        self._token = token
        self._app = app
        self._tokens = InstallationTokens()
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
        secrets = context.secrets
        token, app = None, None
        if settings.token is not None:
            token_name = settings.token.secret
            token = lambda: secrets.get(token_name)  # noqa: E731 - read at each send
        if settings.app is not None:
            key_name = settings.app.private_key.secret
            app = GitHubApp(
                app_id=settings.app.app_id,
                installation_id=settings.app.installation_id,
                private_key=lambda: secrets.get(key_name),
            )
        return cls(
            name,
            settings.repository,
            settings.issue,
            token,
            app=app,
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
        session = _Session(self)
        now = self._clock.now().timestamp()
        session.bearer = self._bearer(session, now)
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

    def _bearer(self, session: _Session, now: float) -> str:
        """The token this send uses: the configured one, or the App's installation token."""
        if self._app is None:
            return self.secret(self._token or "", "token")
        app = self._app
        return self._tokens.get(now, lambda: session.exchange(app, now))

    def secret(self, value: str | Callable[[], str], what: str) -> str:
        """``value``'s current value.

        Raises:
            SendFailed: missing (permanent) or the source failed transiently (retryable).
        """
        try:
            return value() if callable(value) else value
        except SecretMissing as exc:
            raise self.failed(f"no {what}: {exc}", retryable=False) from exc
        except StoreUnavailable as exc:
            raise self.failed(f"the {what} is unavailable: {exc}", retryable=True) from exc

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

    def __init__(self, channel: GitHubChannel) -> None:
        self._channel = channel
        self.bearer = ""
        self._headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": USER_AGENT,
        }
        self._checked = False
        self._address: str | None = None

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
                if not isinstance(comment, dict) or not isinstance(comment.get("id"), int):
                    continue
                body = comment.get("body")
                if isinstance(body, str) and body.startswith(wanted):
                    return _receipt(comment)
            if page == 1:
                last = _last_page(links)
                pages = list(range(last, 1, -1))
        return None

    def exchange(self, app: GitHubApp, now: float) -> tuple[str, float]:
        """A new installation token of ``app`` and when it expires (epoch seconds).

        Raises:
            SendFailed: the key is missing or unusable, or GitHub refused the JWT or
                knows no such installation (permanent); a transient failure (retryable).
        """
        channel = self._channel
        key = channel.secret(app.private_key, "App private key")
        try:
            jwt = app_jwt(app.app_id, key, now)
        except ValueError as exc:
            raise channel.failed(
                f"the App private key is unusable: {exc}", retryable=False
            ) from None
        path = f"/app/installations/{app.installation_id}/access_tokens"
        answer, _ = self._send("POST", path, bearer=jwt)
        token = answer.get("token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            raise channel.failed(f"POST {path}: no token in the answer", retryable=True)
        return token, expiry(answer.get("expires_at"), now)

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
        bearer: str | None = None,
    ) -> tuple[Any, httpx.Response]:
        channel = self._channel
        api = channel._api
        url = api.copy_with(path=api.path.rstrip("/") + path, params=params)
        headers = {"Authorization": f"Bearer {bearer or self.bearer}", **self._headers}
        extensions: dict[str, Any] = {}
        if not self._checked:
            # once per send, and only once a request is due (a missing token first)
            self._address, self._checked = _checked_address(channel), True
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
        if response.status_code == 401 and bearer is None and channel._app is not None:
            # A held installation token that GitHub no longer takes (revoked, the App
            # reinstalled): the next attempt exchanges for a new one.
            channel._tokens.forget()
            raise channel.failed(f"{label}: the installation token was refused", retryable=True)
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
        spent = headers.get("x-ratelimit-remaining") == "0"
        if wait is None and spent:
            wait = _until_reset(headers.get("x-ratelimit-reset"), now())
        if wait is not None or spent:
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
    if channel.allow_private:
        return None
    url = channel._api
    return checked_address(
        channel.name,
        scheme=url.scheme,
        host=url.host,
        port=url.port,
        resolve=channel._resolve,
        setting="apiUrl",
        kind="API URLs",
    )


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
