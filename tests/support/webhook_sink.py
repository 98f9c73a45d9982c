"""A real HTTP server on loopback that records webhook requests and answers as scripted.

``sink.script(Reply(503, {"Retry-After": "7"}), Reply(204))`` queues the next
answers; once the queue is empty every request gets ``Reply()`` (204).
``sink.exchanges`` holds each request with the reply it got. ``WebhookSink(tls=name)``
serves HTTPS with a fresh self-signed certificate for ``name``; ``trust()`` is
the SSL context a client needs to accept it.
"""

from __future__ import annotations

import datetime
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["Exchange", "Received", "Reply", "WebhookSink", "webhook_sink"]

_MAX_DELAY = 5.0  # a scripted slow answer never holds a test longer than this


@dataclass(frozen=True)
class Reply:
    """One scripted answer; ``delay`` seconds pass before it is sent."""

    status: int = 204
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0


@dataclass(frozen=True)
class Received:
    """A request as the server saw it; header names are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Exchange:
    request: Received
    reply: Reply


class WebhookSink:
    """The server; start with ``start()``, stop with ``close()`` (the fixture does both)."""

    def __init__(self, tls: str | None = None) -> None:
        self.exchanges: list[Exchange] = []
        self._certificate: bytes | None = None
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                sink._handle(self)

            do_GET = do_POST

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep test output clean

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self._certificate, key = _self_signed(tls)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            with tempfile.TemporaryDirectory() as folder:
                cert_file, key_file = Path(folder) / "cert.pem", Path(folder) / "key.pem"
                cert_file.write_bytes(self._certificate)
                key_file.write_bytes(key)
                context.load_cert_chain(cert_file, key_file)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        # A short poll keeps shutdown (once per test) from waiting the default half second.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def trust(self) -> ssl.SSLContext:
        """A client context that trusts this sink's certificate (and nothing else)."""
        assert self._certificate is not None, "the sink serves plain HTTP"
        return ssl.create_default_context(cadata=self._certificate.decode())

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def received(self) -> list[Received]:
        with self._lock:
            return [exchange.request for exchange in self.exchanges]

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        request = Received(
            method=handler.command,
            path=handler.path,
            headers={name.lower(): value for name, value in handler.headers.items()},
            body=body,
        )
        with self._lock:
            reply = self._replies.pop(0) if self._replies else Reply()
            self.exchanges.append(Exchange(request, reply))
        if reply.delay:
            time.sleep(min(reply.delay, _MAX_DELAY))
        try:
            handler.send_response(reply.status)
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.send_header("content-length", str(len(reply.body)))
            handler.end_headers()
            if reply.body:
                handler.wfile.write(reply.body)
        except OSError:
            pass  # the client gave up waiting (a timeout test): nobody to answer


def _self_signed(hostname: str) -> tuple[bytes, bytes]:
    """A PEM certificate for ``hostname`` signed by its own key, and that key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return (
        certificate.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


@pytest.fixture
def webhook_sink() -> Iterator[WebhookSink]:
    """A started sink on 127.0.0.1, closed after the test."""
    sink = WebhookSink()
    sink.start()
    try:
        yield sink
    finally:
        sink.close()
