"""What the JSON-over-HTTP model adapters share: one POST and its error translation.

Each adapter supplies its provider name and how its provider words a
context-length rejection; the status table, Retry-After parsing and key
redaction live here once.
"""

from __future__ import annotations

import email.utils
import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from signoff.errors import ModelRejected, ModelUnavailable, PromptTooLong

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "RETRYABLE_STATUSES",
    "ProviderError",
    "build_client",
    "key_header",
    "post_json",
    "retry_after",
]

# 529 is Anthropic's "overloaded"; 408 is a server-side request timeout.
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 529})

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


def key_header(api_key_env: str, name: str, *, scheme: str = "") -> dict[str, str]:
    """The header ``name: <scheme><key>`` for the key in ``api_key_env``; none without one.

    A keyless server (a local Ollama) gets no credential header at all.
    """
    api_key = os.environ.get(api_key_env)
    return {name: f"{scheme}{api_key}"} if api_key else {}


def post_json(
    client: httpx.Client,
    path: str,
    body: Mapping[str, Any],
    *,
    provider: str,
    too_long: Callable[[ProviderError], bool],
) -> dict[str, Any]:
    """POSTs ``body`` as JSON and returns the decoded JSON object of a 2xx reply.

    Raises:
        ModelUnavailable: a retryable status, a timeout or a connection failure.
        PromptTooLong: ``too_long`` recognised the provider's rejection.
        ModelRejected: any other failure.
    """
    try:
        response = client.post(path, json=body)
    except httpx.TimeoutException as exc:
        raise ModelUnavailable(f"{provider}: request timed out", provider=provider) from exc
    except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
        raise ModelUnavailable(
            f"{provider}: connection failed ({type(exc).__name__})", provider=provider
        ) from exc
    except httpx.HTTPError as exc:
        raise ModelRejected(
            f"{provider}: request could not be sent ({type(exc).__name__})", provider=provider
        ) from exc

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
    if error.status in RETRYABLE_STATUSES:
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


def retry_after(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``Retry-After``, if either parses.

    ``headers`` must look names up case-insensitively or use lower-case keys.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - now())


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
