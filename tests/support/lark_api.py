"""A Lark (Feishu) Open API on loopback that issues tokens and keeps one chat's messages.

``POST /open-apis/auth/v3/tenant_access_token/internal`` checks the app id and
secret and answers a ``tenant_access_token``; ``POST /open-apis/im/v1/messages``
(``receive_id_type=chat_id``) checks the bearer token and the chat, and honours
the request's ``uuid`` as Lark does: at most one message per uuid within the
dedupe window (one hour) — a repeat inside it answers ``code 0`` with the message
already sent and posts nothing; a refused send leaves its uuid unused. Lark
answers errors as a non-zero ``code``: ``fail_next`` makes the next sends fail,
transiently (the gateway's rate limit, 99991400 under HTTP 429) or for good (the
bot is not in the chat, 230002 under HTTP 400). Every request is in
``server.requests`` for a test to check the exact calls.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Final, Self

from tests.support.http_server import Recorded, RecordingServer, Reply

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

__all__ = ["DEDUPE_WINDOW", "FakeLark"]

TOKEN_PATH: Final = "/open-apis/auth/v3/tenant_access_token/internal"
MESSAGES_PATH: Final = "/open-apis/im/v1/messages"
DEDUPE_WINDOW: Final = 3600.0  # Lark: one message per uuid within an hour
_TOKEN: Final = "t-loopback"
_ANSWERS: Final = 200  # scripted answers per path: more than any test makes


class FakeLark:
    """One app (``app_id`` / ``app_secret``) whose bot is in one chat (``chat_id``)."""

    def __init__(
        self,
        app_id: str = "cli_test",
        app_secret: str = "secret-test",
        chat_id: str = "oc_test",
        *,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.server = RecordingServer()
        self.messages: list[dict[str, Any]] = []
        self._app = (app_id, app_secret)
        self._chat_id = chat_id
        self._now = now
        self._by_uuid: dict[str, tuple[dict[str, Any], float]] = {}
        self._failures: list[bool] = []
        self._lock = threading.Lock()
        self.server.script([self._token] * _ANSWERS, path=TOKEN_PATH)
        self.server.script([self._send] * _ANSWERS, path=MESSAGES_PATH)

    @property
    def url(self) -> str:
        return self.server.url

    def fail_next(self, times: int, *, retryable: bool) -> None:
        with self._lock:
            self._failures += [retryable] * times

    def uuids(self) -> list[str]:
        """The ``uuid`` of every message in the chat, in the order they were posted."""
        with self._lock:
            return [m["uuid"] for m in self.messages]

    def sends(self) -> int:
        """How many message requests reached the API (accepted, deduped or refused)."""
        return sum(1 for r in self.server.requests if r.path == MESSAGES_PATH)

    def _token(self, request: Recorded) -> Reply:
        body = request.json()
        if (body.get("app_id"), body.get("app_secret")) != self._app:
            return Reply(status=400, json={"code": 10014, "msg": "app secret invalid"})
        return Reply(json={"code": 0, "msg": "ok", "tenant_access_token": _TOKEN, "expire": 7200})

    def _send(self, request: Recorded) -> Reply:
        if request.headers.get("authorization") != f"Bearer {_TOKEN}":
            return Reply(status=400, json={"code": 99991663, "msg": "Invalid access token"})
        body = request.json()
        if request.query.get("receive_id_type") != ["chat_id"] or body.get("receive_id") != (
            self._chat_id
        ):
            return Reply(status=400, json={"code": 230001, "msg": "invalid receive_id"})
        with self._lock:
            if self._failures:
                if self._failures.pop(0):
                    return Reply(
                        status=429,
                        json={"code": 99991400, "msg": "request trigger frequency limit"},
                    )
                return Reply(
                    status=400, json={"code": 230002, "msg": "Bot/User can NOT be out of the chat."}
                )
            now = self._now()
            found = self._by_uuid.get(body["uuid"])
            if found is not None and now - found[1] < DEDUPE_WINDOW:
                return Reply(json={"code": 0, "msg": "success", "data": found[0]})
            message = {
                "message_id": f"om_{len(self.messages) + 1:06d}",
                "chat_id": self._chat_id,
                "msg_type": body["msg_type"],
                "uuid": body["uuid"],
                "content": body["content"],
            }
            self.messages.append(message)
            self._by_uuid[body["uuid"]] = (message, now)
        return Reply(json={"code": 0, "msg": "success", "data": message})

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
