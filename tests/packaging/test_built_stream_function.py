"""The stream function as deployed: its built ``run.sh``, started as the Web Adapter starts it.

The adapter's ``/opt/bootstrap`` runs the function's Handler (``run.sh``) with
``PORT`` set and the function's variables, waits for the readiness path
(``AWS_LWA_READINESS_CHECK_PATH``) to answer, then forwards each function URL
request to ``127.0.0.1:$PORT`` and streams the answer's chunks back. This test
does the same with the built function and layers, the Lambda runtime's
stand-in's python3.13 first on ``PATH``, against a moto server: one streamed
turn, and the API-key check of every other route.
"""

from __future__ import annotations

import subprocess
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from signoff.keys.api_keys import new_api_key
from signoff.store.dynamodb import DynamoStore
from tests.conftest import validate_event
from tests.packaging.test_built_handlers import (
    LAMBDA_PYTHON,
    built_function,
    process_environment,
)
from tests.packaging.test_built_handlers import built as built
from tests.packaging.test_built_handlers import lambda_env as lambda_env
from tests.support.aws import free_port, load_template
from tests.support.aws import moto_server as moto_server
from tests.support.sse import sse_events

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.slow

STREAM = "/agents/customer-service/messages/stream"
TRACKING = "where is order A-1001?"


def _adapter_settings() -> dict[str, Any]:
    variables: dict[str, Any] = load_template()["Resources"]["StreamFunction"]["Properties"][
        "Environment"
    ]["Variables"]
    return variables


@pytest.fixture
def stream_url(lambda_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """The built stream function's server, started by its run.sh as the adapter does."""
    function = built_function("StreamFunction")
    settings = _adapter_settings()
    port = free_port()
    env = {
        **process_environment(function, lambda_env),
        # Lambda's python3.13 is on PATH as /var/lang/bin's python3.
        "PATH": f"{LAMBDA_PYTHON.parent}:{lambda_env['PATH']}",
        "PORT": str(port),
        # Keys are required, as on a deployed stack by default.
        "SIGNOFF_ALLOW_ANONYMOUS": "false",
    }
    log = (tmp_path / "server.log").open("wb")
    # Executed, not read by sh: the adapter executes the Handler, so it must stay executable.
    server = subprocess.Popen(
        [str(function.code / function.handler)], env=env, cwd=function.code, stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:  # the adapter's readiness check
            assert server.poll() is None, (tmp_path / "server.log").read_text()
            try:
                if httpx.get(base + settings["AWS_LWA_READINESS_CHECK_PATH"]).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


def test_the_template_runs_the_function_through_the_web_adapter_in_streaming_mode() -> None:
    settings = _adapter_settings()
    assert settings["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert settings["AWS_LWA_INVOKE_MODE"] == "response_stream"
    url = load_template()["Resources"]["StreamFunction"]["Properties"]["FunctionUrlConfig"]
    assert url == {"AuthType": "NONE", "InvokeMode": "RESPONSE_STREAM"}


def test_the_built_stream_function_streams_a_turn_for_a_caller_with_a_key(
    stream_url: str,
) -> None:
    # Given a key for tenant acme in the deployment's table
    store = DynamoStore.from_env()
    clear, record = new_api_key("acme", "stream test", time.time())
    store.api_keys.add(record)
    with httpx.Client(base_url=stream_url, timeout=60) as http:
        # When a caller without a key asks for a stream, then one with the key
        refused = http.post(STREAM, json={"message": TRACKING})
        with http.stream(
            "POST", STREAM, json={"message": TRACKING}, headers={"x-api-key": clear}
        ) as response:
            status, content_type = response.status_code, response.headers["content-type"]
            events = list(sse_events(response.iter_lines()))
    # Then the keyless caller gets the API's 401, as on every other route
    assert refused.status_code == 401, refused.text
    assert refused.json()["error"] == "unauthorized"
    # And the keyed one the protocol's frames: session first, the engine's events, done last
    assert status == 200 and content_type.startswith("text/event-stream")
    for event in events:
        validate_event(event)
    assert events[0]["type"] == "session"
    assert [e["type"] for e in events][-2:] == ["loop:done", "done"]
    assert "A-1001" in events[-1]["text"]
    # And the turn ran as the key's tenant, in the deployment's table
    session = store.sessions.load(events[0]["sessionId"])
    assert session is not None and session.tenant == "acme" and session.status == "done"
