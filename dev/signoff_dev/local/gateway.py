"""API Gateway's HTTP API on loopback: each request becomes the event the function receives.

The event is payload format 2.0, as API Gateway — and ``sam local start-api``
— build it: ``routeKey``, ``rawPath``, ``rawQueryString``, lower-cased
``headers`` (repeats joined with commas, cookies moved to ``cookies``),
``queryStringParameters``, ``pathParameters``, ``requestContext`` and the
body, base64-encoded when it is not text. The handler's answer (``statusCode``,
``headers``, ``cookies``, ``body``, ``isBase64Encoded``) is written back. A
request that matches no route gets API Gateway's own 404.

One difference is deliberate: ``requestContext.domainName`` is the ``Host``
the client sent, port included. API Gateway serves on 443, so its domain needs
no port; locally the port is part of the origin a browser sends, and the link
pages compare the two before taking a form.

Before any route, the stack's guard (``signoff_dev.local.guard``) may refuse a
request a web page could have sent. Local-only routes (the webhook sink, the
SSE stream, the playground) are served before the template's routes and never
reach a function. A response with a ``stream`` is sent as it is produced, in
chunked transfer encoding.
"""

from __future__ import annotations

import base64
import dataclasses
import errno
import json
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl

from signoff.errors import (
    MalformedRequest,
    MethodNotAllowed,
    PayloadTooLarge,
    SignoffError,
    UsageError,
)
from signoff_dev.local.template import ACCOUNT_ID

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from typing import TypeAlias

    from signoff_dev.local.router import Route, RouteTable

    # (method, path) of a local-only route → what answers it.
    LocalRoutes: TypeAlias = dict[tuple[str, str], Callable[["HttpRequest"], "HttpResponse"]]
    # A local-only route with path parameters → what answers it, given them.
    LocalPatterns: TypeAlias = list[
        tuple[Route, Callable[["HttpRequest", dict[str, str]], "HttpResponse"]]
    ]

__all__ = ["Gateway", "HttpRequest", "HttpResponse", "api_gateway_event", "lambda_response"]

# API Gateway's HTTP API refuses larger payloads.
MAX_BODY: Final = 10 * 1024 * 1024
_TEXT_TYPES: Final = ("text/", "application/json", "application/x-www-form-urlencoded")
_TEXT_SUFFIXES: Final = ("+json", "+xml", "/xml", "/javascript")
API_ID: Final = "local"
# Headers the gateway sets itself: how the body is framed, and the connection.
_FRAMING: Final = ("content-length", "connection", "transfer-encoding")


@dataclass(frozen=True)
class HttpRequest:
    """A request as it arrived: header names as sent, the body as bytes."""

    method: str
    raw_path: str
    raw_query: str
    headers: list[tuple[str, str]]
    body: bytes
    source_ip: str
    protocol: str

    def header(self, name: str, default: str = "") -> str:
        """The first value of the header ``name`` (any case)."""
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return default


@dataclass(frozen=True)
class HttpResponse:
    """What to send back."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    # Sent chunk by chunk as it yields (Server-Sent Events), instead of ``body``.
    stream: Iterator[bytes] | None = None

    @classmethod
    def json(cls, status: int, payload: Any) -> HttpResponse:
        return cls(status, [("content-type", "application/json")], json.dumps(payload).encode())


def _text_body(body: bytes, content_type: str) -> str | None:
    """The body as text when its type is textual and it is UTF-8, else None (sent base64)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if not (kind.startswith(_TEXT_TYPES) or kind.endswith(_TEXT_SUFFIXES)):
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def api_gateway_event(
    route: Route, parameters: Mapping[str, str], request: HttpRequest
) -> dict[str, Any]:
    """The payload-format-2.0 event API Gateway would send the route's function."""
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in request.headers:
        lowered = name.lower()
        if lowered == "cookie":
            cookies.extend(part.strip() for part in value.split(";") if part.strip())
            continue
        headers[lowered] = f"{headers[lowered]},{value}" if lowered in headers else value
    host = headers.get("host", "")
    headers.setdefault("x-forwarded-for", request.source_ip)
    headers.setdefault("x-forwarded-proto", "http")
    headers.setdefault("x-forwarded-port", host.rpartition(":")[2] if ":" in host else "80")
    query: dict[str, str] = {}
    for name, value in parse_qsl(request.raw_query, keep_blank_values=True):
        query[name] = f"{query[name]},{value}" if name in query else value
    now = datetime.now(UTC)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route.route_key,
        "rawPath": request.raw_path,
        "rawQueryString": request.raw_query,
        "headers": headers,
        "requestContext": {
            "accountId": ACCOUNT_ID,
            "apiId": API_ID,
            "domainName": host,
            "domainPrefix": host.split(".", 1)[0].split(":", 1)[0],
            "http": {
                "method": request.method,
                "path": request.raw_path,
                "protocol": request.protocol,
                "sourceIp": request.source_ip,
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": uuid.uuid4().hex,
            "routeKey": route.route_key,
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": False,
    }
    if cookies:
        event["cookies"] = cookies
    if query:
        event["queryStringParameters"] = query
    if parameters:
        event["pathParameters"] = dict(parameters)
    if request.body:
        text = _text_body(request.body, headers.get("content-type", ""))
        event["body"] = text if text is not None else base64.b64encode(request.body).decode()
        event["isBase64Encoded"] = text is None
    return event


def lambda_response(result: Any) -> HttpResponse:
    """The HTTP response for a handler's result, as API Gateway maps payload format 2.0."""
    if not isinstance(result, dict) or "statusCode" not in result:
        # A result without a status code is a 200 JSON body (API Gateway's 2.0 inference).
        return HttpResponse.json(200, result)
    headers = [(str(k), str(v)) for k, v in (result.get("headers") or {}).items()]
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers.extend((str(name), str(value)) for value in values)
    headers.extend(("set-cookie", str(cookie)) for cookie in result.get("cookies") or [])
    body = result.get("body") or ""
    raw = base64.b64decode(body) if result.get("isBase64Encoded") else str(body).encode("utf-8")
    return HttpResponse(int(result["statusCode"]), headers, raw)


class Gateway:
    """A threading HTTP server that routes to functions (``invoke``) or local routes."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        log: Callable[[str], None],
    ) -> None:
        """Bind ``host:port`` now, so a port in use is reported before anything starts.

        Raises:
            UsageError: the port is in use, or the address cannot be bound.
        """
        self.routes: RouteTable | None = None
        self.local: LocalRoutes = {}
        self.local_patterns: LocalPatterns = []
        self.invoke: Callable[[Route, dict[str, Any]], Any] | None = None
        # Runs before any route: a refusal of what a web page could have sent (local.guard).
        self.guard: Callable[[HttpRequest], HttpResponse | None] | None = None
        self._log = log
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive: clients reuse one connection; every answer has a Content-Length.
            protocol_version = "HTTP/1.1"
            # An answer's headers and body are two writes: with Nagle's algorithm the body
            # waits for the client's delayed ACK of the headers, about 40 ms per answer.
            disable_nagle_algorithm = True
            # Seconds a socket read or write may block: a client that announces more body
            # than it sends, or stops mid-request, ties up its thread no longer.
            timeout = 30

            def _serve(self) -> None:
                gateway._serve(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _serve

            def __getattr__(self, name: str) -> Any:
                # Any other method (PROPFIND, FOO) is routed too: a known path answers
                # 405 with Allow, as API Gateway's routes do, not the server's bare 501.
                if name.startswith("do_"):
                    return self._serve
                raise AttributeError(name)

            def log_message(self, format: str, *args: object) -> None:
                pass  # one line per request is written by _serve, to the stack's console

        class Server(ThreadingHTTPServer):
            # Bursts of clients (a load test, a page's parallel requests) queue, not fail.
            request_queue_size = 128
            daemon_threads = True

        try:
            self._server = Server((host, port), Handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise UsageError(
                    f"port {port} is already in use on {host}: stop what listens there "
                    "or choose another port with --port"
                ) from exc
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="gateway",
            daemon=True,
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        started = time.monotonic()
        path, _, query = handler.path.partition("?")
        body, refusal = _read_body(handler)
        if refusal is not None:
            # The next request's start on this connection cannot be found: close it.
            self._write(handler, refusal)
            handler.close_connection = True
            self._log(f"{handler.command} {path} → {refusal.status} (refused framing)")
            return
        request = HttpRequest(
            method=handler.command,
            raw_path=path,
            raw_query=query,
            headers=list(handler.headers.items()),
            body=body,
            source_ip=handler.client_address[0],
            protocol=handler.request_version,
        )
        target, response = self._answer(request)
        self._write(handler, response)
        took = (time.monotonic() - started) * 1000
        self._log(f"{request.method} {path} → {response.status} ({target}, {took:.0f} ms)")

    def _answer(self, request: HttpRequest) -> tuple[str, HttpResponse]:
        refused = self.guard(request) if self.guard is not None else None
        if refused is not None:
            return "refused", refused
        local = self.local.get((request.method, request.raw_path))
        if local is not None:
            return "local", local(request)
        for pattern, serve in self.local_patterns:
            parameters = pattern.parameters(request.method, request.raw_path)
            if parameters is not None:
                return "local", serve(request, parameters)
        allowed = self._local_methods(request.raw_path)
        if allowed and request.method not in allowed:
            refusal = _refusal(MethodNotAllowed(request.method, allowed))
            return "local", dataclasses.replace(
                refusal, headers=[*refusal.headers, ("allow", ", ".join(allowed))]
            )
        found = self.routes.match(request.method, request.raw_path) if self.routes else None
        if found is None or self.invoke is None:
            return "no route", HttpResponse.json(404, {"message": "Not Found"})
        route, parameters = found
        try:
            result = self.invoke(route, api_gateway_event(route, parameters, request))
        except Exception:  # the function crashed: API Gateway answers 500, the log has why
            self._log(f"{route.function} failed:\n{traceback.format_exc()}")
            return route.function, HttpResponse.json(500, {"message": "Internal Server Error"})
        return route.function, lambda_response(result)

    def _local_methods(self, path: str) -> list[str]:
        """The methods the local-only routes serve at ``path`` (none: not a local path)."""
        methods = {method for method, local in self.local if local == path}
        methods.update(
            pattern.method
            for pattern, _ in self.local_patterns
            if pattern.parameters(pattern.method, path) is not None
        )
        return sorted(methods)

    @staticmethod
    def _head(handler: BaseHTTPRequestHandler, response: HttpResponse, framing: str) -> None:
        """The status line and headers; ``framing`` is how the body's end is known."""
        handler.send_response(response.status)
        for name, value in response.headers:
            if name.lower() not in _FRAMING:
                handler.send_header(name, value)
        name, _, value = framing.partition(": ")
        handler.send_header(name, value)
        handler.end_headers()

    @staticmethod
    def _write(handler: BaseHTTPRequestHandler, response: HttpResponse) -> None:
        if response.stream is not None:
            Gateway._write_stream(handler, response, response.stream)
            return
        try:
            Gateway._head(handler, response, f"content-length: {len(response.body)}")
            if response.body and handler.command != "HEAD":
                handler.wfile.write(response.body)
        except OSError:
            handler.close_connection = True  # the client went away; nobody to answer

    @staticmethod
    def _write_stream(
        handler: BaseHTTPRequestHandler, response: HttpResponse, stream: Iterator[bytes]
    ) -> None:
        """Each chunk as the stream yields it; a client that goes away ends the stream."""
        try:
            Gateway._head(handler, response, "transfer-encoding: chunked")
            handler.wfile.flush()
            for chunk in stream:
                if chunk:
                    handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    handler.wfile.flush()
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except OSError:
            handler.close_connection = True
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # a generator's cleanup runs now, not at garbage collection


def _refusal(error: SignoffError) -> HttpResponse:
    """The gateway's own refusal: the API's status and ``{error, detail}`` for ``error``."""
    from signoff.api.errors import error_payload

    status, body = error_payload(error)
    return HttpResponse.json(status, body)


def _read_body(handler: BaseHTTPRequestHandler) -> tuple[bytes, HttpResponse | None]:
    """The request's body, or why it cannot be read (the connection is then closed).

    Framed by one ``Content-Length`` of digits (repeats must agree) or by chunked
    ``Transfer-Encoding`` (clients streaming a body send it so), never both: a
    server and a proxy that find a body's end differently are how requests are
    smuggled (RFC 9112, section 6.3). Past ``MAX_BODY`` is a 413, as API Gateway's.
    """
    encodings = [v.strip().lower() for v in handler.headers.get_all("transfer-encoding") or []]
    lengths = {value.strip() for value in handler.headers.get_all("content-length") or []}
    if encodings and lengths:
        return _unreadable("Content-Length and Transfer-Encoding together")
    if encodings and encodings != ["chunked"]:
        return _unreadable(f"unsupported Transfer-Encoding {', '.join(encodings)!r}")
    try:
        if encodings:
            return _read_chunked(handler)
        if not lengths:
            return b"", None
        if len(lengths) > 1 or not all(part.isascii() and part.isdigit() for part in lengths):
            return _unreadable("Content-Length must be one non-negative integer")
        length = int(lengths.pop())
        if length > MAX_BODY:
            return b"", _too_large(length)
        body = handler.rfile.read(length)
    except OSError:  # the read timed out (``timeout``) or the client reset
        return _unreadable("the body ended before its announced end")
    if len(body) != length:  # the client sent less than it announced and stopped
        return _unreadable("the body is shorter than its Content-Length")
    return body, None


def _read_chunked(handler: BaseHTTPRequestHandler) -> tuple[bytes, HttpResponse | None]:
    """A chunked body: ``<hex size>[;ext]`` lines, each chunk, a 0 chunk, trailers."""
    body = b""
    while True:
        line = handler.rfile.readline(1024)
        size_text = line.split(b";", 1)[0].strip()
        if (
            not line.endswith(b"\n")
            or not size_text
            or not all(c in b"0123456789abcdefABCDEF" for c in size_text)
        ):
            return _unreadable("a malformed chunk size")
        size = int(size_text, 16)
        if size == 0:
            break
        if len(body) + size > MAX_BODY:
            return b"", _too_large(len(body) + size)
        chunk = handler.rfile.read(size)
        if len(chunk) != size or handler.rfile.read(2) != b"\r\n":
            return _unreadable("a chunk shorter than its size")
        body += chunk
    for _ in range(100):  # trailer fields, ignored, up to the empty line
        trailer = handler.rfile.readline(8192)
        if trailer in (b"\r\n", b"\n"):
            return body, None
        if not trailer.endswith(b"\n"):
            break
    return _unreadable("malformed trailer fields")


def _unreadable(problem: str) -> tuple[bytes, HttpResponse]:
    return b"", _refusal(MalformedRequest(problem))


def _too_large(size: int) -> HttpResponse:
    return _refusal(PayloadTooLarge(size, MAX_BODY))
