"""The stream function's server (functions/stream/app.py) on moto: key check, routes, a turn.

Imported as its run.sh starts it (its cold start builds the deployment's ``Api``),
then served over HTTP on loopback as the Lambda Web Adapter reaches it. Every AWS
call of the import and of the requests counts for ``StreamFunction``
(tests/functional/template/test_iam_grants.py compares them with its policy).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import sys
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from signoff.api.stream_server import READY_PATH, make_server
from signoff.continuations.memory import MemoryContinuations
from signoff.keys.api_keys import new_api_key
from tests.conftest import validate_event
from tests.support import awscalls
from tests.support.aws import aws as aws
from tests.support.local_stack import REFUND
from tests.support.sse import sse_events

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.support.aws import AwsResources

from tests.support.lambdas import ROOT

STREAM = "/agents/customer-service/messages/stream"
TRACKING = "where is order A-1001?"


def _import_app() -> Any:
    path = ROOT / "functions" / "stream" / "app.py"
    name = f"signoff_fn_stream_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)  # not as __main__: the server is started below
    return module


def _deployment(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The app imported as its run.sh starts it, in the template's deployment on moto."""
    monkeypatch.setenv("SIGNOFF_AGENTS_DIR", str(ROOT / "agents"))
    monkeypatch.setenv("SIGNOFF_ENVIRONMENT", "production")
    monkeypatch.setenv("SIGNOFF_ALLOW_ANONYMOUS", "false")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    awscalls.install()
    with awscalls.attributed("StreamFunction"):
        app = _import_app()
    # Lambda's asynchronous self-invoke cannot run on moto: continuations are kept here.
    app.API = dataclasses.replace(app.API, continuations=MemoryContinuations())
    return app


@pytest.fixture
def served(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[tuple[str, Any]]:
    """(base URL, the app's Api) of the stream function's server, its calls recorded.

    Parametrized indirectly, the parameter is the turn budget instead of the app's.
    """
    app = _deployment(monkeypatch)
    stopping = threading.Event()
    server = make_server(
        lambda: app.API,
        host="127.0.0.1",
        port=0,
        max_body=app.API.max_body_bytes,
        stopping=stopping,
        budget=getattr(request, "param", app.BUDGET),
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", app.API
    finally:
        stopping.set()  # ends the stream that follows a paused turn
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _key(api: Any, tenant: str) -> str:
    clear, record = new_api_key(tenant, "stream test", time.time())
    api.api_keys.add(record)
    return clear


def test_the_stream_function_refuses_a_caller_without_a_key_and_answers_other_routes_as_the_api(
    served: tuple[str, Any],
) -> None:
    url, _ = served
    with httpx.Client(base_url=url, timeout=30) as http, awscalls.attributed("StreamFunction"):
        assert http.get(READY_PATH).status_code == 200  # the adapter's readiness check
        keyless = http.post(STREAM, json={"message": TRACKING})
        wrong = http.post(STREAM, json={"message": TRACKING}, headers={"x-api-key": "sk_nope"})
        elsewhere = http.post("/agents/customer-service/messages", json={"message": TRACKING})
        get = http.get(STREAM)
        too_large = http.post(STREAM, content=b"x" * (256 * 1024 + 1))
    assert (keyless.status_code, keyless.json()["error"]) == (401, "unauthorized")
    assert (wrong.status_code, wrong.json()["error"]) == (401, "unauthorized")
    assert elsewhere.status_code == 404 and elsewhere.json()["error"] == "not_found"
    assert get.status_code == 405
    assert too_large.status_code == 413


@contextlib.contextmanager
def _streaming(
    url: str, key: str, message: str, **fields: str
) -> Iterator[Iterator[dict[str, Any]]]:
    """The events of ``message``'s stream as they come, its AWS calls recorded."""
    body = {"message": message, **fields}
    with (
        httpx.Client(base_url=url, timeout=60) as http,
        awscalls.attributed("StreamFunction"),
        http.stream("POST", STREAM, json=body, headers={"x-api-key": key}) as r,
    ):
        assert r.status_code == 200, r.read()
        yield sse_events(r.iter_lines())


def test_the_stream_function_streams_a_turn_as_the_keys_tenant_with_its_session_key(
    served: tuple[str, Any],
) -> None:
    url, api = served
    key = _key(api, "acme")
    with _streaming(url, key, TRACKING, customerId="c-42") as stream:
        events = list(stream)
    # The same customer again: the same session, derived from the session key
    with _streaming(url, key, TRACKING, customerId="c-42") as stream:
        again = list(stream)
    for event in events:
        validate_event(event)
    assert events[0]["type"] == "session" and events[-1]["type"] == "done"
    assert again[0] == events[0]
    session = api.sessions.load(events[0]["sessionId"])
    assert session is not None and session.tenant == "acme"


def test_an_approval_is_live_on_the_stream_functions_stream(served: tuple[str, Any]) -> None:
    url, api = served
    with _streaming(url, _key(api, "acme"), REFUND) as events:
        seen = []
        for event in events:
            seen.append(event)
            if event["type"] == "approval:pending":
                break
    # The pause is committed (the item exists) when the event arrives
    pending = seen[-1]
    assert pending["type"] == "approval:pending" and pending["tool"] == "issue_refund"
    item = api.pending.get(pending["id"])
    assert item is not None and item.tenant == "acme"


def test_the_app_gives_a_turn_the_functions_timeout_less_the_api_margin(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _deployment(monkeypatch)
    # The template's MessageTimeout default, as SIGNOFF_FUNCTION_TIMEOUT
    assert 300 - app.API.safety_margin == app.BUDGET


@pytest.mark.parametrize("served", [0.0], indirect=True)
def test_a_turn_past_the_functions_budget_yields_and_continues_asynchronously(
    served: tuple[str, Any],
) -> None:
    url, api = served
    with _streaming(url, _key(api, "acme"), TRACKING) as events:
        first = next(events)
        # The turn yielded "running" at once; the stream scheduled its continuation
        scheduled: list[str] = []
        deadline = time.monotonic() + 10
        while not scheduled and time.monotonic() < deadline:
            scheduled = api.continuations.drain()
            time.sleep(0.05)
    assert scheduled == [first["sessionId"]]
    session = api.sessions.load(first["sessionId"])
    assert session is not None and session.status == "running"
