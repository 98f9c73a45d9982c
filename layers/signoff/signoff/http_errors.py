"""How the HTTP adapters (model providers, notification channels) classify a failure.

One table of retryable statuses, one ``Retry-After`` parser and one translation
of httpx's exceptions, so a model call and a webhook agree on what is worth
another attempt. Each adapter still words its own error and picks its own
exception from the one tree (``ModelUnavailable`` / ``ModelRejected``,
``SendFailed(retryable=…)``): ``map_httpx_errors`` hands it a reason and
whether retrying can help, the way httpx's own transports map httpcore's
exceptions onto httpx's.

httpx is imported only inside ``map_httpx_errors``: Bedrock's adapter parses
``Retry-After`` from botocore's headers without loading httpx.
"""

from __future__ import annotations

import contextlib
import email.utils
import math
import time
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

__all__ = ["RETRYABLE", "map_httpx_errors", "retry_after"]

# 408 is a server-side request timeout, 429 a rate limit, 5xx the service's own
# trouble (529 is Anthropic's "overloaded"): another attempt later can succeed.
# Every other status is the request's fault and fails the same way again.
RETRYABLE: Final = frozenset({408, 429, *range(500, 600)})


@contextlib.contextmanager
def map_httpx_errors(failure: Callable[[str, bool], Exception]) -> Iterator[None]:
    """Re-raise an httpx exception from the block as ``failure(reason, retryable)``.

    ``failure`` builds the adapter's own exception from the signoff tree.

    A timeout and a connection that failed or broke mid-way are retryable (the
    service may answer next time); a request httpx could not build or send at
    all (bad URL scheme, undecodable body, too many redirects) is not.
    ``reason`` is a short phrase such as ``timed out`` or ``failed in transit
    (ConnectError)``; the adapter prefixes it with what it was doing.

    Raises:
        Exception: whatever ``failure`` returns, chained to the httpx exception.
    """
    import httpx

    try:
        yield
    except httpx.TimeoutException as exc:
        raise failure("timed out", True) from exc
    except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
        raise failure(f"failed in transit ({type(exc).__name__})", True) from exc
    except httpx.HTTPError as exc:
        raise failure(f"could not be sent ({type(exc).__name__})", False) from exc


def retry_after(
    headers: Mapping[str, str],
    *,
    header: str = "retry-after",
    now: Callable[[], float] = time.time,
) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``header``, if either parses.

    ``header`` holds seconds or an HTTP date (``Retry-After``'s two forms); a
    vendor's own reset header in seconds (Lark's ``x-ogw-ratelimit-reset``)
    works too. A time in the past is 0; a value that is no finite number, None.
    ``headers`` must look names up case-insensitively or use lower-case keys.
    """
    millis = _seconds(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = headers.get(header)
    if value is None:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - now())


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return max(0.0, seconds) if math.isfinite(seconds) else None
