"""What the JSON-over-HTTP model adapters share: one POST and its error translation.

Each adapter supplies its provider name and how its provider words a
context-length rejection; key redaction lives here once, and the status table,
Retry-After parsing and httpx's exceptions come from ``signoff.http_errors``,
which the channels share.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from signoff.errors import ModelError, ModelRejected, ModelUnavailable, PromptTooLong
from signoff.http_errors import RETRYABLE, map_httpx_errors, retry_after

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["ProviderError", "build_client", "key_header", "post_json"]

_MESSAGE_LIMIT = 500
_SECRET_HEADERS = ("authorization", "x-api-key", "api-key")
# Providers echo a (sometimes masked) key back in 401 messages.
_KEY_PATTERN = re.compile(r"\bsk-[A-Za-z0-9_*.\-]{4,}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderError:
    """A provider's error response, reduced to what classification needs."""

    status: int
    code: str
    message: str


def build_client(
    *,
    base_url: str,
    headers: Mapping[str, str],
    timeout: float,
    transport: httpx.BaseTransport | None,
) -> httpx.Client:
    """The httpx client an adapter's ``from_settings`` hands to its constructor."""
    return httpx.Client(
        base_url=base_url,
        headers=dict(headers),
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        transport=transport,
    )


def key_header(
    api_key_env: str, name: str, *, scheme: str = "", api_key: str | None = None
) -> dict[str, str]:
    """The header ``name: <scheme><key>``: ``api_key`` (read from a secret), else the key
    in ``api_key_env``; none without one.

    A keyless server (a local Ollama) gets no credential header at all.
    """
    api_key = api_key or os.environ.get(api_key_env)
    return {name: f"{scheme}{api_key}"} if api_key else {}


def post_json(
    client: httpx.Client,
    path: str,
    body: Mapping[str, Any],
    *,
    provider: str,
    too_long: Callable[[ProviderError], bool],
    timeout: float | None = None,
) -> dict[str, Any]:
    """POSTs ``body`` as JSON and returns the decoded JSON object of a 2xx reply.

    ``timeout`` (a request's, ``ModelRequest.timeout``) shortens the client's own
    timeouts for this request: a call never outlives the invocation's time.

    Raises:
        ModelUnavailable: a retryable status, a timeout or a connection failure.
        PromptTooLong: ``too_long`` recognised the provider's rejection.
        ModelRejected: any other failure.
    """

    def failure(reason: str, retryable: bool) -> ModelError:
        kind = ModelUnavailable if retryable else ModelRejected
        return kind(f"{provider}: request {reason}", provider=provider)

    with map_httpx_errors(failure):
        response = client.post(path, json=body, timeout=_within(client.timeout, timeout))

    secrets = _secrets(client.headers)
    if response.is_success:
        try:
            decoded = response.json()
        except ValueError as exc:
            raise ModelRejected(
                f"{provider}: response was not JSON", provider=provider, status=response.status_code
            ) from exc
        if not isinstance(decoded, dict):
            raise ModelRejected(
                f"{provider}: response was not a JSON object",
                provider=provider,
                status=response.status_code,
            )
        return decoded

    error = _provider_error(response, secrets)
    message = f"{provider} returned HTTP {error.status}: {error.message}"
    if error.status in RETRYABLE:
        raise ModelUnavailable(
            message,
            provider=provider,
            status=error.status,
            retry_after=retry_after(response.headers),
        )
    # 413 is a body too large to accept: shrinking the prompt is the remedy either way.
    if error.status == 413 or (error.status == 400 and too_long(error)):
        raise PromptTooLong(message, provider=provider, status=error.status)
    raise ModelRejected(message, provider=provider, status=error.status)


def _within(configured: httpx.Timeout, limit: float | None) -> httpx.Timeout:
    """``configured`` with no phase longer than ``limit`` seconds."""
    if limit is None:
        return configured

    def cap(value: float | None) -> float:
        return limit if value is None else min(value, limit)

    return httpx.Timeout(
        connect=cap(configured.connect),
        read=cap(configured.read),
        write=cap(configured.write),
        pool=cap(configured.pool),
    )


def _provider_error(response: httpx.Response, secrets: tuple[str, ...]) -> ProviderError:
    """Reads OpenAI's and Anthropic's shared ``{"error": {"message", "code"|"type"}}`` shape."""
    code = ""
    message = ""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            code = str(error.get("code") or error.get("type") or "")
            message = str(error.get("message") or "")
        elif isinstance(error, str):
            message = error
    if not message:
        message = response.text.strip() or response.reason_phrase
    return ProviderError(status=response.status_code, code=code, message=_redact(message, secrets))


def _secrets(headers: httpx.Headers) -> tuple[str, ...]:
    values = []
    for name in _SECRET_HEADERS:
        value = headers.get(name)
        if value:
            values.append(value.removeprefix("Bearer ").strip())
    return tuple(value for value in values if value)


def _redact(message: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        message = message.replace(secret, "[redacted]")
    message = _KEY_PATTERN.sub("[redacted]", message)
    if len(message) > _MESSAGE_LIMIT:
        message = message[:_MESSAGE_LIMIT] + "…"
    return message
