"""A Slack Web API on loopback that keeps what is posted and lists it back.

``chat.postMessage`` stores the message (with its ``metadata``) and answers its
``ts``; ``chat.update`` keeps each redraw in ``updates``; ``conversations.history``
lists the stored messages newest first, as Slack does with ``include_all_metadata``.
``fail_next`` makes the next posts fail, transiently (HTTP 503) or for good
(``channel_not_found``). Every request is in ``server.requests`` for a test to
check the exact calls.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Self

from tests.support.http_server import Recorded, RecordingServer, Reply

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["FakeSlack"]

_ANSWERS = 100  # scripted answers per path: more than any test makes


class FakeSlack:
    """``chat.postMessage`` and ``conversations.history`` over one channel's messages."""

    def __init__(self) -> None:
        self.server = RecordingServer()
        self.messages: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self._failures: list[bool] = []
        self._lock = threading.Lock()
        self.server.script([self._post] * _ANSWERS, path="/chat.postMessage")
        self.server.script([self._history] * _ANSWERS, path="/conversations.history")
        self.server.script([self._update] * _ANSWERS, path="/chat.update")

    @property
    def url(self) -> str:
        return self.server.url

    def fail_next(self, times: int, *, retryable: bool) -> None:
        with self._lock:
            self._failures += [retryable] * times

    def calls(self) -> list[str]:
        """The paths called, in order."""
        return [r.path for r in self.server.requests]

    def markers(self) -> list[str]:
        """The idempotency keys of the hidden markers of the posted messages, in order."""
        with self._lock:
            return [m["metadata"]["event_payload"]["idempotency_key"] for m in self.messages]

    def _post(self, request: Recorded) -> Reply:
        body = request.json()
        with self._lock:
            if self._failures:
                if self._failures.pop(0):
                    return Reply(status=503)
                return Reply(json={"ok": False, "error": "channel_not_found"})
            ts = f"1700000000.{len(self.messages) + 1:06d}"
            self.messages.append({"type": "message", "ts": ts, **body})
        return Reply(json={"ok": True, "channel": body["channel"], "ts": ts})

    def _update(self, request: Recorded) -> Reply:
        body = request.json()
        with self._lock:
            self.updates.append(body)
        return Reply(json={"ok": True, "channel": body["channel"], "ts": body["ts"]})

    def _history(self, request: Recorded) -> Reply:
        with self._lock:
            listed = self.messages[::-1]
        return Reply(json={"ok": True, "messages": listed, "has_more": False})

    def __enter__(self) -> Self:
        self.server.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.stop()
