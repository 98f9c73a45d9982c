"""A stand-in for Lambda's Runtime API: what ``awslambdaric`` polls inside a sandbox.

The runtime interface client (``python -m awslambdaric app.handler``, the python3.13
runtime's bootstrap) asks ``GET /2018-06-01/runtime/invocation/next`` for an event,
calls the handler, and posts its answer to ``…/invocation/{id}/response`` or, when
the handler raised, ``…/invocation/{id}/error``; an import that fails is posted to
``/2018-06-01/runtime/init/error``. This server hands out the events ``invoke`` is
given, one at a time, with the headers Lambda sends (request id, deadline, function
ARN, trace id), and gives back what the client posted. A ``next`` with no event
waits, as a frozen sandbox does, until ``stop``. A SnapStart environment's
``restore/next`` (after its init, before its restore hooks) is answered at once.

    with RuntimeApi(function_arn) as api:
        process = subprocess.Popen([..., "-m", "awslambdaric", "app.handler"],
                                   env={"AWS_LAMBDA_RUNTIME_API": api.address, ...})
        outcome = api.invoke(event, timeout=60)
"""

from __future__ import annotations

import json
import queue
import secrets
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Outcome", "RuntimeApi"]

PREFIX = "/2018-06-01/runtime"


@dataclass(frozen=True)
class Outcome:
    """What the client posted for one invocation: ``response``, ``error`` or ``init/error``."""

    kind: str
    body: Any
    error_type: str | None = None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The sandbox's process is killed while its client waits in ``next``: the reset
        # connection is how every test ends, not an error to print.
        return


class RuntimeApi:
    """One sandbox's Runtime API on a free loopback port."""

    def __init__(self, function_arn: str) -> None:
        self.function_arn = function_arn
        self._events: queue.Queue[tuple[str, bytes, float]] = queue.Queue()
        self._outcomes: dict[str, queue.Queue[Outcome]] = {}
        self._init_error: queue.Queue[Outcome] = queue.Queue()
        # When each ``GET …/restore/next`` came: a SnapStart environment's, once per
        # restore (AWS_LAMBDA_INITIALIZATION_TYPE=snap-start), answered at once
        self.restores: list[float] = []
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def address(self) -> str:
        """``host:port``, the form ``AWS_LAMBDA_RUNTIME_API`` takes."""
        host, port = self._server.server_address[:2]
        return f"{host!s}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def invoke(self, event: Any, *, timeout: float) -> Outcome:
        """Serve ``event`` to the next ``next``; what the client posted back for it.

        ``timeout`` is the function's: the deadline the client is told, and how long
        this waits (plus the cold start's grace) before failing the test.
        """
        request_id = str(uuid.uuid4())
        self._outcomes[request_id] = queue.Queue()
        self._events.put((request_id, json.dumps(event).encode(), time.time() + timeout))
        waited = time.monotonic() + timeout + 60
        while time.monotonic() < waited:
            try:
                return self._outcomes[request_id].get(timeout=0.2)
            except queue.Empty:
                pass
            try:  # an import that failed never asks for the event
                return self._init_error.get_nowait()
            except queue.Empty:
                continue
        raise TimeoutError(f"the runtime client answered nothing for {request_id}")

    def _next(self) -> tuple[str, bytes, float] | None:
        while not self._stopping.is_set():
            try:
                return self._events.get(timeout=0.2)
            except queue.Empty:
                continue
        return None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path == f"{PREFIX}/restore/next":
                    api.restores.append(time.time())
                    self._reply(200, {})
                    return
                if self.path != f"{PREFIX}/invocation/next":
                    self._reply(404, {"errorMessage": f"no route {self.path}"})
                    return
                served = api._next()
                if served is None:
                    self._reply(500, {"errorMessage": "the runtime API stopped"})
                    return
                request_id, body, deadline = served
                root = f"1-{int(time.time()):08x}-{secrets.token_hex(12)}"
                self._reply(
                    200,
                    body,
                    {
                        "Lambda-Runtime-Aws-Request-Id": request_id,
                        "Lambda-Runtime-Deadline-Ms": str(int(deadline * 1000)),
                        "Lambda-Runtime-Invoked-Function-Arn": api.function_arn,
                        "Lambda-Runtime-Trace-Id": f"Root={root};Sampled=1",
                    },
                )

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                posted = json.loads(self.rfile.read(length) or b"null")
                error_type = self.headers.get("Lambda-Runtime-Function-Error-Type")
                parts = self.path.removeprefix(f"{PREFIX}/").split("/")
                if parts == ["init", "error"]:
                    api._init_error.put(Outcome("init/error", posted, error_type))
                elif (
                    len(parts) == 3
                    and parts[0] == "invocation"
                    and parts[2]
                    in {
                        "response",
                        "error",
                    }
                ):
                    api._outcomes[parts[1]].put(Outcome(parts[2], posted, error_type))
                else:
                    self._reply(404, {"errorMessage": f"no route {self.path}"})
                    return
                self._reply(202, {"status": "OK"})

            def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler
