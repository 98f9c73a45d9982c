"""The two ways a turn's message travels: an SSE stream's lines, and a post on a thread."""

from __future__ import annotations

import contextlib
import json
import threading
from typing import TYPE_CHECKING, Any

import httpx

from signoff.client.answers import error_for
from signoff.events import parse

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.client.connection import Connection
    from signoff.errors import SignoffError
    from signoff.events import LoopEvent

__all__ = ["Posting", "sse_events"]


class Posting:
    """``POST path`` on a thread of its own: its answer, or that its connection dropped."""

    def __init__(self, client: Connection, path: str, body: dict[str, Any]) -> None:
        self._response: httpx.Response | None = None
        self._thread = threading.Thread(target=self._post, args=(client, path, body), daemon=True)
        self._thread.start()

    def _post(self, client: Connection, path: str, body: dict[str, Any]) -> None:
        # A dropped connection leaves no answer: the turn goes on on the server, and
        # the status route tells it.
        with contextlib.suppress(httpx.TransportError):
            self._response = client.http.post(path, json=body, headers=client.headers)

    def running(self) -> bool:
        return self._thread.is_alive()

    def refusal(self) -> SignoffError | None:
        """The error the message was answered with, if any."""
        response = self._response
        return error_for(response) if response is not None and response.is_error else None

    def answer(self) -> dict[str, Any] | None:
        response = self._response
        if response is None or response.is_error:
            return None
        body: dict[str, Any] = response.json()
        return body


def sse_events(lines: Iterator[str]) -> Iterator[LoopEvent]:
    """The events of an SSE stream's lines (comments skipped, ``data:`` lines joined)."""
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield parse(json.loads("\n".join(data)))
            data = []
