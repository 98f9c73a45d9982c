"""``signoff trigger <agent>``: an agent's schedule run once against a running local stack.

The stack runs in this process on a free port; the command runs as a
subprocess, as a person would run it beside ``signoff dev``, and reaches the
stack's local-only ``POST /_local/trigger`` route.
"""

from __future__ import annotations

import io
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

import httpx
import pytest

from signoff_dev.local.stack import LocalStack, StackSettings
from signoff_dev.local.template import find_template

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

ROOT = find_template().parent
DIGEST = "daily-digest"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    console = io.StringIO()
    local = LocalStack(StackSettings(port=0, console=console, logs=console))
    local.start()
    try:
        yield local
    finally:
        local.stop()


def port(stack: LocalStack) -> str:
    return stack.url.rsplit(":", 1)[1]


def trigger(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    code = "import sys; from signoff_dev.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, "trigger", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_daily_digest_schedule_runs_once_and_finishes_with_its_text(
    stack: LocalStack,
) -> None:
    ran = trigger(DIGEST, "--port", port(stack))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    first, *rest = ran.stdout.splitlines()
    assert '"status": "finished"' in first
    text = next(line for line in rest if line.startswith("text: "))
    assert len(text) > len("text: ")
    # the session the scheduled run left is there, done, as the default tenant's
    session = first.split('"sessionId": "', 1)[1].split('"', 1)[0]
    status = httpx.get(f"{stack.url}/agents/{DIGEST}/sessions/{session}").json()
    assert status["status"] == "done" and text == f"text: {status['text']}"


def test_the_route_hands_the_function_eventbridges_event_as_is(stack: LocalStack) -> None:
    event = {"agent": DIGEST, "message": "Summarise today's orders.", "tenant": "default"}
    answer = httpx.post(f"{stack.url}/_local/trigger", json=event, timeout=60)
    assert answer.status_code == 200 and answer.json()["status"] == "finished"
    extra = httpx.post(f"{stack.url}/_local/trigger", json={**event, "x": 1}, timeout=60)
    assert extra.status_code == 400
    unknown = httpx.post(
        f"{stack.url}/_local/trigger", json={**event, "agent": "no-such-agent"}, timeout=60
    )
    assert unknown.status_code == 404 and "no-such-agent" in unknown.json()["detail"]


def test_an_unknown_agent_is_a_clear_error(stack: LocalStack) -> None:
    ran = trigger("no-such-agent", "--port", port(stack))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "no-such-agent" in ran.stderr and DIGEST in ran.stderr


def test_an_agent_without_a_schedule_needs_a_message(stack: LocalStack) -> None:
    ran = trigger("customer-service", "--port", port(stack))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "has no schedule" in ran.stderr and "--message" in ran.stderr


def test_a_message_runs_an_agent_without_a_schedule(stack: LocalStack) -> None:
    ran = trigger("customer-service", "--port", port(stack), "--message", "hello")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert '"sessionId"' in ran.stdout


def test_no_stack_on_the_port_is_a_clear_error() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        free = unused.getsockname()[1]
    ran = trigger(DIGEST, "--port", str(free))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "no local stack answered" in ran.stderr
