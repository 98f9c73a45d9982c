"""``hooks.py`` on the local stack and in ``signoff run``, per transport.

Given a loopengine-style agent folder (``systemPrompt``, inline rules) and the sample
digest agent, each with a recording ``hooks.py``, when turns run over plain HTTP,
a schedule, an approval that resumes a paused turn, the SSE stream and the CLI, then
``on_run_start`` / ``on_run_finish`` fire for the first three (the resumed run's finish
after the approval, not at the pause) and never for the stream or the CLI.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from tests.support.cli import signoff_cli
from tests.support.hooks import agents_with_hooks, hook_calls
from tests.support.local_stack import REFUND, running_stack
from tests.support.local_stack import http as http
from tests.support.loopengine import loopengine_agent
from tests.support.sse import sse_events

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from signoff_dev.local.stack import LocalStack

WHERE = "where is order A-1001?"
MESSAGES = "/agents/customer-service/messages"


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hooks") / "hooks.jsonl"


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory, log: Path) -> Path:
    """The sample agents with the recording hooks.py, customer-service in loopengine's form
    (``systemPrompt``, inline ``rules`` + ``defaultDecision``): a loopengine user's folder."""
    root = agents_with_hooks(tmp_path_factory.mktemp("folders"), log)
    hooks = (root / "customer-service" / "hooks.py").read_text(encoding="utf-8")
    shutil.rmtree(root / "customer-service")
    (loopengine_agent(root) / "hooks.py").write_text(hooks, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def stack(agents: Path) -> Iterator[LocalStack]:
    with running_stack(agents) as local:
        yield local


def of_session(log: Path, session_id: str) -> list[tuple[str, Any, Any]]:
    return [
        (call["hook"], call["channel"], call.get("trigger"))
        for call in hook_calls(log)
        if call["sessionId"] == session_id
    ]


def test_a_plain_http_turn_fires_both_hooks(http: httpx.Client, log: Path) -> None:
    done = http.post(MESSAGES, json={"message": WHERE})

    assert done.status_code == 200, done.text
    assert of_session(log, done.json()["sessionId"]) == [
        ("on_run_start", "http", "message"),
        ("on_run_finish", "http", None),
    ]


def test_an_approval_resumes_the_turn_and_its_finish_fires_then(
    http: httpx.Client, log: Path
) -> None:
    paused = http.post(MESSAGES, json={"message": REFUND})
    assert paused.status_code == 202, paused.text
    session = paused.json()["sessionId"]
    assert of_session(log, session) == [("on_run_start", "http", "message")]

    done = http.post(f"/approvals/{paused.json()['id']}/approve", json={})

    assert done.status_code == 200, done.text
    assert of_session(log, session) == [
        ("on_run_start", "http", "message"),
        ("on_run_start", "http", "resolution"),
        ("on_run_finish", "http", None),
    ]
    (finish,) = [c for c in hook_calls(log) if c["sessionId"] == session][-1:]
    assert finish["text"] == done.json()["text"]


def test_a_scheduled_run_fires_both_hooks(stack: LocalStack, log: Path) -> None:
    event = {"agent": "daily-digest", "message": "Summarise today's orders.", "tenant": "default"}
    ran = httpx.post(f"{stack.url}/_local/trigger", json=event, timeout=60)

    assert ran.status_code == 200, ran.text
    assert of_session(log, ran.json()["sessionId"]) == [
        ("on_run_start", "schedule", "message"),
        ("on_run_finish", "schedule", None),
    ]


def test_a_streamed_turn_fires_no_hook(http: httpx.Client, log: Path) -> None:
    with http.stream("POST", f"{MESSAGES}/stream", json={"message": WHERE}) as response:
        assert response.status_code == 200, response.read()
        events = list(sse_events(response.iter_lines()))

    assert events[0]["type"] == "session" and events[-1]["type"] == "done"
    assert of_session(log, events[0]["sessionId"]) == []


def test_signoff_run_fires_no_hook(agents: Path, log: Path, tmp_path: Path) -> None:
    before = len(hook_calls(log))
    command = ("--agents", str(agents), "run", "customer-service", "--env", "production")
    for args in (["--json", WHERE], ["--json", "--approve", REFUND]):
        done = signoff_cli(*command, *args, home=tmp_path)
        assert done.returncode == 0, done.stderr
        assert '"type": "done"' in done.stdout or '"type":"done"' in done.stdout

    assert len(hook_calls(log)) == before, "the terminal saw the run start and end"
