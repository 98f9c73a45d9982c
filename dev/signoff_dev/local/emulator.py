"""The AWS emulator of the local stack: moto's server on loopback, over real HTTP.

Built from the same pieces as ``moto.server.ThreadedMotoServer`` (moto's WSGI
app and request handler on werkzeug's threaded server), with two differences
the local stack needs:

- it binds port 0 and reports the port it got, so two stacks, or a stack and a
  test, never race for a "free" port;
- DynamoDB requests are served one at a time. DynamoDB applies each request
  atomically; moto's backend does not (two threads can both pass the same
  condition), and the local stack's resolve and sweep paths rely on conditional
  writes deciding races. Other services stay concurrent: an SQS long poll must
  not hold up a table read;
- moto's DynamoDB models forget their instances after each request. moto
  records every model object it makes for its dashboard, and a
  ``TransactWriteItems`` deep-copies the table (its rollback) — each copy a
  new table of every item, recorded and so never freed. A turn commits a
  transaction per step: the process would grow by a table each step, and the
  garbage collector's full passes over it stall every thread of the stack for
  up to a second (what ``bench/live_latency.py``'s long-poll p95 measured).

moto keeps its state per process, so ``stop`` resets it for the next emulator.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any, Final

import httpx

from signoff.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TypeAlias

    from werkzeug.serving import BaseWSGIServer

    _Wsgi: TypeAlias = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

__all__ = ["AwsEmulator"]

# What boto3 sends as X-Amz-Target for every DynamoDB operation.
_DYNAMODB_TARGET: Final = "DynamoDB_"


class _OneDynamoRequestAtATime:
    """WSGI middleware: DynamoDB requests under one lock, everything else straight through."""

    def __init__(self, app: _Wsgi) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if not str(environ.get("HTTP_X_AMZ_TARGET", "")).startswith(_DYNAMODB_TARGET):
            return self._app(environ, start_response)
        with self._lock:
            # Read the whole body inside the lock: the request is done when it is sent.
            try:
                return list(self._app(environ, start_response))
            finally:
                _forget_dynamodb_instances()


def _forget_dynamodb_instances() -> None:
    """Empty the lists in which moto records its DynamoDB model objects.

    Only moto's dashboard (``/moto-api/data.json``) reads them; the tables
    themselves live in the backend, which keeps what it holds.
    """
    from moto.core.model_instances import model_data

    for model in model_data.get("dynamodb", {}).values():
        model.instances_tracked.clear()  # type: ignore[attr-defined]


class AwsEmulator:
    """moto in server mode on ``127.0.0.1``; ``endpoint`` is what ``AWS_ENDPOINT_URL`` gets."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>`` once started."""
        if self._server is None:
            raise UsageError("the AWS emulator is not running")
        return f"http://{self.host}:{self._server.server_port}"

    def start(self) -> None:
        """Serve on a port the system picks, in a daemon thread.

        Raises:
            UsageError: moto's server extras are not installed.
        """
        try:
            from moto.moto_server.werkzeug_app import (
                DomainDispatcherApplication,
                MotoRequestHandler,
                create_backend_app,
            )
            from werkzeug.serving import make_server
        except ImportError as exc:
            raise UsageError(
                "the local stack needs moto's server: pip install 'moto[server]' "
                "(or the project's dev extras: pip install -e '.[dev]')"
            ) from exc

        class QuietHandler(MotoRequestHandler):
            def log(self, type: str, message: str, *args: Any) -> None:
                pass  # one line per AWS call would drown the stack's own console

        app = _OneDynamoRequestAtATime(DomainDispatcherApplication(create_backend_app))
        self._server = make_server(self.host, 0, app, threaded=True, request_handler=QuietHandler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="aws-emulator", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Forget every resource (moto's state is process-wide) and stop serving."""
        if self._server is None:
            return
        # Stopping anyway when the reset fails: the next emulator's resources are new ones.
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(f"{self.endpoint}/moto-api/reset", timeout=10.0)
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
        self._server = None
