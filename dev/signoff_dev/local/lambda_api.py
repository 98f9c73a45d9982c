"""Lambda's Invoke API on loopback, for the asynchronous invocations the functions make.

A turn near its deadline goes on in a fresh invocation: the composition root's
``LambdaContinuations`` invokes the continuing function with
``InvocationType=Event``. The local stack points boto3's Lambda endpoint here
(``AWS_ENDPOINT_URL_LAMBDA``, boto3's per-service endpoint variable, as one would
for ``sam local start-lambda``), so the deployed adapter runs unchanged and the
functions' modules are used as imported.

``POST /2015-03-31/functions/{name}/invocations`` with ``X-Amz-Invocation-Type:
Event`` answers 202 and runs the function on the payload in a thread of its
own; a function is named by its physical name or its ARN. Nothing else is
served. Lambda retries a failed asynchronous invocation and then drops it; here
a failure is reported and the turn's lease runs out, so the sweeper re-drives
it, as on AWS.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["Invocable", "LambdaInvokeApi"]

_PREFIX = "/2015-03-31/functions/"
_SUFFIX = "/invocations"
# Lambda's limit for an asynchronous invocation's payload.
_MAX_PAYLOAD = 256 * 1024


class Invocable(Protocol):
    """A function as the stack holds it: ``LocalFunction``."""

    def invoke(self, event: dict[str, Any]) -> Any: ...


class LambdaInvokeApi:
    """Serves asynchronous ``Invoke`` calls for ``functions`` (by physical name)."""

    def __init__(
        self,
        functions: Mapping[str, Invocable],
        *,
        report: Callable[[str], None],
        host: str = "127.0.0.1",
    ) -> None:
        self.functions = functions
        self._report = report
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                status, error, message = api._accept(self)
                body = b""
                if error is not None:
                    body = json.dumps({"Type": "User", "message": message}).encode()
                # A refused request's body may be unread: never reuse the connection.
                self.close_connection = True
                self.send_response(status)
                self.send_header("Connection", "close")
                if error is not None:
                    self.send_header("x-amzn-ErrorType", error)
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # each invocation is the function's own log

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self._server.daemon_threads = True
        self._serving: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        """The endpoint for ``AWS_ENDPOINT_URL_LAMBDA``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._serving = threading.Thread(
            target=self._server.serve_forever, name="lambda-invoke-api", daemon=True
        )
        self._serving.start()

    def stop(self, timeout: float) -> None:
        """Stop taking invocations; wait up to ``timeout`` seconds for the running ones."""
        if self._serving is not None:
            self._server.shutdown()
        self._server.server_close()
        deadline = time.monotonic() + timeout
        with self._lock:
            running = list(self._threads)
        for thread in running:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _accept(self, request: BaseHTTPRequestHandler) -> tuple[int, str | None, str]:
        """Start one invocation; the status, and Lambda's error type and message if refused."""
        # Only a signed call from an AWS SDK: a web page cannot send an Authorization
        # header across origins without a preflight, which this server never answers.
        if not request.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256 "):
            return 403, "AccessDeniedException", "the request is not signed"
        # A Host other than this server's address is a name rebound to loopback.
        if request.headers.get("Host", "") != urlsplit(self.endpoint).netloc:
            return 403, "AccessDeniedException", "unexpected Host"
        path = urlsplit(request.path).path
        if not (path.startswith(_PREFIX) and path.endswith(_SUFFIX)):
            return 404, "UnknownOperationException", "only Invoke is served here"
        name = unquote(path[len(_PREFIX) : -len(_SUFFIX)])
        # A name or an ARN, either with a qualifier or none (the template's continuations
        # name the alias: <stack>-message:live); the local stack runs one of each function.
        arn = name.startswith("arn:") and name.count(":") >= 6
        name = name.split(":")[6] if arn else name.split(":", 1)[0]
        function = self.functions.get(name)
        if function is None:
            return 404, "ResourceNotFoundException", f"Function not found: {name}"
        if request.headers.get("X-Amz-Invocation-Type") != "Event":
            return 400, "InvalidParameterValueException", "only Event invocations are served"
        event = _payload(request)
        if event is None:
            return 400, "InvalidRequestContentException", "the payload is not a JSON object"
        thread = threading.Thread(
            target=self._run, args=(name, function, event), name=f"invoke-{name}", daemon=True
        )
        with self._lock:
            self._threads.add(thread)
        thread.start()
        return 202, None, ""

    def _run(self, name: str, function: Invocable, event: dict[str, Any]) -> None:
        try:
            function.invoke(event)
        except Exception:  # a crashed invocation, as Lambda would log it
            self._report(
                f"asynchronous invocation of {name} failed (a continuation's session is "
                f"re-driven by the sweeper):\n{traceback.format_exc()}"
            )
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())


def _payload(request: BaseHTTPRequestHandler) -> dict[str, Any] | None:
    try:
        size = int(request.headers.get("Content-Length", "0"))
    except ValueError:
        return None
    if not 0 < size <= _MAX_PAYLOAD:
        return None
    try:
        event = json.loads(request.rfile.read(size))
    except ValueError:
        return None
    return event if isinstance(event, dict) else None
