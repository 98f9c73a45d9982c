"""boto3 clients built on first use, once per process.

A leaf: it imports nothing of signoff, so the AWS adapters (store, queue,
continuations, email) use it without importing the composition root
(``signoff.aws``), which imports them.

Building a client loads its service model (tens of milliseconds each); a
function that never touches S3 on a request should not pay for an S3 client
during its cold start. Under SnapStart the clients made at init are built before
the snapshot instead (``build_made``, from ``signoff.aws.snapstart.prime``).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

__all__ = ["LazyClient", "build_made", "lazy_client"]

# Every client made in this process, for ``build_made``; held weakly.
_made: weakref.WeakSet[LazyClient] = weakref.WeakSet()


class LazyClient:
    """Stands in for ``boto3.client(service)`` and builds it when first used."""

    def __init__(self, service: str, **kwargs: Any) -> None:
        self._service = service
        self._kwargs = kwargs
        self._client: Any = None
        self._lock = threading.Lock()
        _made.add(self)

    def _real(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3

                    self._client = boto3.client(self._service, **self._kwargs)  # type: ignore[call-overload]
        return self._client

    @property
    def built(self) -> bool:
        return self._client is not None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)


def build_made() -> int:
    """Build every client made so far that is not built yet; how many were built."""
    waiting = [client for client in list(_made) if not client.built]
    for client in waiting:
        client._real()
    return len(waiting)


def lazy_client(service: str, **kwargs: Any) -> Any:
    """A client for ``service`` that is built on first use (typed as the caller needs)."""
    return LazyClient(service, **kwargs)
