"""A real HTTP server on loopback that records every request and answers from a script.

Channel adapters are tested against this instead of a mocked client: the
request goes through httpx, the socket and an HTTP parser, so the test sees the
exact method, path, query, headers and body the real service would receive.

    with RecordingServer() as server:
        server.script([Reply(json={"ok": True, "ts": "1.2"})])
        ...  # point the adapter at server.url
        assert server.requests[0].json() == {...}

Replies are taken in order; ``script(..., path=...)`` keeps a separate queue for
one path (a token endpoint beside a message endpoint). A request with nothing
scripted gets a 599 and is listed in ``unscripted`` so the test can fail loudly.
"""

from __future__ import annotations

import json as jsonlib
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import TracebackType

__all__ = ["Recorded", "RecordingServer", "Reply"]

UNSCRIPTED_STATUS = 599


@dataclass(frozen=True, kw_only=True)
class Recorded:
    """One request as the server received it; header names are lower-cased."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def text(self) -> str:
        """The body decoded as UTF-8."""
        return self.body.decode()

    def json(self) -> Any:
        """The body parsed as JSON."""
        return jsonlib.loads(self.body)

    def form(self) -> dict[str, list[str]]:
        """The body parsed as ``application/x-www-form-urlencoded``."""
        return parse_qs(self.text(), keep_blank_values=True)


@dataclass(frozen=True, kw_only=True)
class Reply:
    """A scripted answer: status, headers, and a body given as bytes, text or JSON."""

    status: int = 200
    json: Any = None
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (timeouts, slow sinks)

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        """The body bytes and the headers to send with them."""
        headers = dict(self.headers)
        if self.json is not None:
            headers.setdefault("Content-Type", "application/json; charset=utf-8")
            return jsonlib.dumps(self.json).encode(), headers
        body = self.body.encode() if isinstance(self.body, str) else self.body
        return body, headers


# A fixed answer, or a function of the request (to echo, or to decide per request).
Responder = Reply | Callable[[Recorded], Reply]


class _Server(ThreadingHTTPServer):
    # The default listen backlog of 5 refuses a burst of concurrent clients (a
    # notifier's batch); a real service accepts them all.
    request_queue_size = 128


class RecordingServer:
    """A ``ThreadingHTTPServer`` on 127.0.0.1, on a free port, in a daemon thread."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.requests: list[Recorded] = []
        self.unscripted: list[Recorded] = []
        self._lock = threading.Lock()
        self._queue: deque[Responder] = deque()
        self._by_path: dict[str, deque[Responder]] = {}
        self._server = _Server((host, 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll keeps shutdown (once per test) from costing half a second.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        """The base URL, without a trailing slash."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, responses: Iterable[Responder], *, path: str | None = None) -> None:
        """Queue answers, for any path or for one path only; a callable sees the request."""
        with self._lock:
            queue = self._queue if path is None else self._by_path.setdefault(path, deque())
            queue.extend(responses)

    def start(self) -> Self:
        """Serve in the background."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _answer(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            queue = self._by_path.get(recorded.path)
            if not queue:
                queue = self._queue
            responder = queue.popleft() if queue else None
            if responder is None:
                self.unscripted.append(recorded)
        if responder is None:
            return Reply(status=UNSCRIPTED_STATUS, body=b"no scripted response")
        return responder(recorded) if callable(responder) else responder

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                recorded = Recorded(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query, keep_blank_values=True),
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=body,
                )
                reply = server._answer(recorded)
                if reply.delay:
                    time.sleep(reply.delay)
                payload, headers = reply.encoded()
                try:
                    self.send_response(reply.status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

            def log_message(self, format: str, *args: Any) -> None:
                """Keep test output clean."""

        return Handler
