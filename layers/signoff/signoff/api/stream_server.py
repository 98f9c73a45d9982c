"""The stream function's HTTP server: ``signoff.api.stream`` over the stdlib's ``http.server``.

Lambda cannot stream a Python handler's return value; AWS's Lambda Web Adapter
can: its layer's ``/opt/bootstrap`` (``AWS_LAMBDA_EXEC_WRAPPER``) starts the
function's ``run.sh``, which starts this server on ``$PORT``
(``functions/stream/app.py``); the adapter waits for ``READY_PATH`` to answer,
then forwards each function URL request to it and, in ``response_stream``
invoke mode, the answer's chunks to the client as they are written. A
``ThreadingHTTPServer``, not a web framework: the layer's dependencies are
enough, and one request is one thread blocked on its turn.

Served: ``POST /agents/{name}/messages/stream`` (the API key checked as on
every other route) and ``GET /healthz``; anything else is the API's 404 / 405.
"""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, ClassVar, Final
from urllib.parse import unquote, urlsplit

from signoff.api.stream import StreamAnswer, TurnStream
from signoff.errors import MethodNotAllowed, NotFound, PayloadTooLarge

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.api.context import Api

__all__ = ["READY_PATH", "make_server"]

READY_PATH: Final = "/healthz"
_STREAM: Final = re.compile(r"/agents/(?P<name>[^/]+)/messages/stream")


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1: the stream's end is the last chunk, so the adapter forwards each one.
    protocol_version = "HTTP/1.1"
    stream: ClassVar[TurnStream]
    max_body: ClassVar[int]

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == READY_PATH:
            self._send(StreamAnswer(200, (("content-type", "text/plain"),), b"ok"))
        elif _STREAM.fullmatch(path):
            self._send(StreamAnswer.refusal(MethodNotAllowed("GET", ["POST"])))
        else:
            self._send(StreamAnswer.refusal(NotFound("route", path)))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length > self.max_body:  # refused unread: a body over the limit is never buffered
            self.close_connection = True  # its bytes are still on the connection
            self._send(StreamAnswer.refusal(PayloadTooLarge(length, self.max_body)))
            return
        # Read whatever the route: an unread body would be taken for the next request.
        body = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path
        match = _STREAM.fullmatch(path)
        if match is None:
            self._send(StreamAnswer.refusal(NotFound("route", path)))
            return
        self._send(self.stream.serve(unquote(match["name"]), body, list(self.headers.items())))

    def _send(self, answer: StreamAnswer) -> None:
        try:
            self.send_response(answer.status)
            for name, value in answer.headers:
                self.send_header(name, value)
            if answer.frames is None:
                self.send_header("content-length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
                return
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            for chunk in answer.frames:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True  # the client left; the turn goes on, durable
        finally:
            if answer.frames is not None:
                close = getattr(answer.frames, "close", None)
                if close is not None:
                    close()

    def log_message(self, format: str, *args: object) -> None:
        # No request lines in the logs: paths are harmless, but the stdlib writes to
        # stderr unstructured; the turn logs through the engine's logger.
        return


def make_server(
    api: Callable[[], Api],
    *,
    host: str,
    port: int,
    max_body: int,
    stopping: threading.Event | None = None,
    budget: float | None = None,
) -> ThreadingHTTPServer:
    """A server for the stream route on ``host:port``; the caller runs ``serve_forever``.

    ``stopping``, once set, ends the streams that follow a paused turn's log;
    ``budget`` is the seconds a request's turn runs before it yields
    (``signoff.api.stream.TurnStream``).
    """
    from signoff.telemetry import logger

    handler = type(
        "StreamHandler",
        (_Handler,),
        {
            "stream": TurnStream(
                api, stopping=stopping or threading.Event(), log=logger.warning, budget=budget
            ),
            "max_body": max_body,
        },
    )
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
