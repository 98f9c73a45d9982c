"""An OpenClaw gateway's hooks endpoint on loopback that validates, dedupes and starts runs.

It answers as the gateway's hooks handler does (OpenClaw at
00ced49d92d6852c4047cdd28702943521a930bc: ``src/gateway/server-http.ts``
``createHooksRequestHandler``, ``src/gateway/hooks.ts``), in its order:

1. a path outside ``hooks.path`` is not the hooks handler's: 404;
2. a ``token`` query parameter: 400 (text), whatever else the request says;
3. a method other than POST: 405;
4. a token neither in ``Authorization: Bearer`` nor ``X-OpenClaw-Token``, or a
   wrong one: 401 — and once 20 failures fell within a minute, 429 with
   ``Retry-After`` for the next minute (one client: everything here is loopback);
5. no sub-path: 404; a body over ``max_body_bytes``: 413; not JSON: 400;
6. ``/agent``: ``message`` required; ``channel`` ``last`` or a channel plug-in's
   id; ``model`` not empty; an ``agentId`` outside ``allowed_agent_ids`` (an
   unknown id counts as the default agent) 400; with ``unknown_agents="refuse"``
   (the later handler) any unknown ``agentId`` 400; a ``sessionKey`` without
   ``allow_request_session_key``, or outside ``allowed_session_key_prefixes``, 400;
7. a repeat of the same token, ``Idempotency-Key`` and fields within 5 minutes
   answers 200 with the first run's id and starts nothing; otherwise a run starts
   (``runs``) and the answer is 200 ``{ok, runId}``.

``fail_next`` makes the next requests fail before any of that, transiently (503,
the later handler's admission timeout) or for good (404, hooks turned off);
``answer_next`` scripts any other answers the same way. Every request is in
``server.requests``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any, Final, Literal, Self

from tests.support.http_server import Recorded, RecordingServer, Reply

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import TracebackType

__all__ = ["REPLAY_TTL", "FakeOpenClaw"]

REPLAY_TTL: Final = 300.0  # DEDUPE_TTL_MS: 5 minutes
_REPLAY_MAX: Final = 1000  # DEDUPE_MAX
_AUTH_FAILURES: Final = 20  # HOOK_AUTH_FAILURE_LIMIT within the window
_AUTH_WINDOW: Final = 60.0  # HOOK_AUTH_FAILURE_WINDOW_MS, also the lockout
_KEY_MAX: Final = 256  # MAX_HOOK_IDEMPOTENCY_KEY_LENGTH
_ANSWERS: Final = 500  # scripted responders: more than any test makes
_QUERY_TOKEN: Final = (
    "Hook token must be provided via Authorization: Bearer <token> or X-OpenClaw-Token "
    "header (query parameters are not allowed)."
)
_SESSION_KEY_DISABLED: Final = (
    "sessionKey is disabled for externally supplied hook payload values; "
    "set hooks.allowRequestSessionKey=true to enable"
)


def _text(status: int, text: str, **headers: str) -> Reply:
    return Reply(
        status=status, body=text, headers={"Content-Type": "text/plain; charset=utf-8", **headers}
    )


def _error(status: int, error: str) -> Reply:
    return Reply(status=status, json={"ok": False, "error": error})


def _trimmed(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class FakeOpenClaw:
    """One gateway with hooks on (``token``, ``base_path``) and the agents it knows."""

    def __init__(
        self,
        token: str = "hook-secret",
        *,
        base_path: str = "/hooks",
        agents: Iterable[str] = ("main", "ops"),
        default_agent: str = "main",
        allowed_agent_ids: Iterable[str] | None = None,
        unknown_agents: Literal["default", "refuse"] = "default",
        allow_request_session_key: bool = False,
        allowed_session_key_prefixes: Iterable[str] | None = None,
        channels: Iterable[str] = ("telegram", "slack", "discord", "whatsapp"),
        max_body_bytes: int = 256 * 1024,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.server = RecordingServer()
        self.runs: list[dict[str, Any]] = []
        self._token = token
        self._base = base_path
        self._agents = {*agents, default_agent}
        self._default = default_agent
        self._allowed = None if allowed_agent_ids is None else set(allowed_agent_ids)
        self._unknown = unknown_agents
        self._session_keys = allow_request_session_key
        self._prefixes = (
            None
            if allowed_session_key_prefixes is None
            else [p.lower() for p in allowed_session_key_prefixes]
        )
        self._channels = ["last", *channels]
        self._max_body = max_body_bytes
        self._now = now
        self._replays: dict[str, tuple[str, float]] = {}
        self._auth_failures: list[float] = []
        self._locked_until = 0.0
        self._scripted: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.server.script([self._handle] * _ANSWERS)

    @property
    def url(self) -> str:
        return self.server.url

    def fail_next(self, times: int, *, retryable: bool) -> None:
        """The next ``times`` requests fail: 503 (a run not admitted in time) or 404."""
        reply = (
            _error(503, "hook agent run did not start before admission timeout")
            if retryable
            else _text(404, "Not Found")
        )
        self.answer_next(*[reply] * times)

    def answer_next(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, before any check."""
        with self._lock:
            self._scripted.extend(replies)

    def run_keys(self) -> list[str | None]:
        """The ``Idempotency-Key`` of every run started, in order."""
        with self._lock:
            return [run["idempotencyKey"] for run in self.runs]

    def _handle(self, request: Recorded) -> Reply:
        with self._lock:
            if self._scripted:
                return self._scripted.popleft()
            return self._hooks(request)

    def _hooks(self, request: Recorded) -> Reply:
        path = request.path
        if path != self._base and not path.startswith(f"{self._base}/"):
            return _text(404, "Not Found")  # not the hooks handler's: the gateway's 404
        if "token" in request.query:
            return _text(400, _QUERY_TOKEN)
        if request.method != "POST":
            return _text(405, "Method Not Allowed", Allow="POST")
        now = self._now()
        if not self._authorized(request):
            if now < self._locked_until:
                wait = max(1, math.ceil(self._locked_until - now))
                return _text(429, "Too Many Requests", **{"Retry-After": str(wait)})
            self._auth_failures = [t for t in self._auth_failures if now - t < _AUTH_WINDOW]
            self._auth_failures.append(now)
            if len(self._auth_failures) >= _AUTH_FAILURES:
                self._locked_until = now + _AUTH_WINDOW
            return _text(401, "Unauthorized")
        self._auth_failures, self._locked_until = [], 0.0
        sub_path = path[len(self._base) :].lstrip("/")
        if not sub_path:
            return _text(404, "Not Found")
        if len(request.body) > self._max_body:
            return _error(413, "payload too large")
        try:
            payload = json.loads(request.body) if request.body.strip() else {}
        except ValueError as exc:
            return _error(400, str(exc))
        if not isinstance(payload, dict):
            payload = {}
        if sub_path != "agent":
            return _text(404, "Not Found")  # no mappings configured
        return self._agent(request, payload, now)

    def _authorized(self, request: Recorded) -> bool:
        auth = request.headers.get("authorization", "").strip()
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        token = token or request.headers.get("x-openclaw-token", "").strip()
        return bool(token) and token == self._token

    def _agent(self, request: Recorded, payload: dict[str, Any], now: float) -> Reply:
        message = _trimmed(payload.get("message"))
        if not message:
            return _error(400, "message required")
        channel_raw = payload.get("channel", "last")
        channel = channel_raw.strip().lower() if isinstance(channel_raw, str) else None
        if channel not in self._channels:
            return _error(400, f"channel must be {'|'.join(self._channels)}")
        if "model" in payload and not _trimmed(payload["model"]):
            return _error(400, "model required")
        agent_id = _trimmed(payload.get("agentId"))
        target = None
        if agent_id is not None:
            known = agent_id.lower() in self._agents
            if not known and self._unknown == "refuse":
                return _error(400, f'unknown agentId "{agent_id.lower()}"')
            target = agent_id.lower() if known else self._default
            if self._allowed is not None and target not in self._allowed:
                return _error(400, "agentId is not allowed by hooks.allowedAgentIds")
        requested = _trimmed(payload.get("sessionKey"))
        if requested is not None:
            if not self._session_keys:
                return _error(400, _SESSION_KEY_DISABLED)
            if self._prefixes and not any(requested.lower().startswith(p) for p in self._prefixes):
                return _error(
                    400, f"sessionKey must start with one of: {', '.join(self._prefixes)}"
                )
        fields = {
            "agentId": target,
            "sessionKey": requested,
            "message": message,
            "name": _trimmed(payload.get("name")) or "Hook",
            "wakeMode": "next-heartbeat" if payload.get("wakeMode") == "next-heartbeat" else "now",
            "deliver": payload.get("deliver") is not False,
            "channel": channel,
            "to": _trimmed(payload.get("to")),
        }
        key = self._idempotency_key(request, payload)
        replay = None
        if key is not None:
            scope = json.dumps({"pathKey": "agent", "dispatchScope": fields}, sort_keys=True)
            replay = f"{_sha(self._token)}:{_sha(scope)}:{_sha(key)}"
            self._replays = {k: v for k, v in self._replays.items() if now - v[1] < REPLAY_TTL}
            if replay in self._replays:
                return Reply(json={"ok": True, "runId": self._replays[replay][0]})
        run_id = str(uuid.uuid4())
        self.runs.append(
            {
                **fields,
                "runId": run_id,
                "idempotencyKey": key,
                "sessionKey": requested or f"hook:{uuid.uuid4()}",
            }
        )
        if replay is not None:
            self._replays[replay] = (run_id, now)
            while len(self._replays) > _REPLAY_MAX:
                self._replays.pop(next(iter(self._replays)))
        return Reply(json={"ok": True, "runId": run_id})

    @staticmethod
    def _idempotency_key(request: Recorded, payload: dict[str, Any]) -> str | None:
        for raw in (
            request.headers.get("idempotency-key"),
            request.headers.get("x-openclaw-idempotency-key"),
            payload.get("idempotencyKey"),
        ):
            key = _trimmed(raw)
            if key is not None and len(key) <= _KEY_MAX:
                return key
        return None

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
