"""One cap on running turns, under load on the local stack (``MaxConcurrentRuns=4``).

Fifty turns start at once, each runs a tool, pauses for a sign-off, is approved as
soon as its pause shows, and runs a second tool after the approval. Every tool
body is measured in flight with one shared gauge.

The starts and approvals call the message function's own ``Turns`` (built by the
stack from ``template.yaml`` with the parameter, over the emulator's table) from
50 threads, as 50 Lambda sandboxes would: the stack's HTTP gateway runs one
invocation at a time (``signoff_dev.local.functions``), which would hide any cap.
Continuations go through the stack's Lambda Invoke API to the message function.
Turns that wait past ``RunSlotWaitSeconds`` are deferred (committed, then run by a
continuation), so the run checks the whole path: never more than four turns in
flight, every message and decision kept, every turn finished with each tool run
exactly once, every slot given back. The same run on an uncapped stack
(``MaxConcurrentRuns=0``) had 9 tool bodies in flight at once.
"""

from __future__ import annotations

import io
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from signoff.durable.decide import Approve
from signoff_dev.local.stack import LocalStack, StackSettings
from tests.support.actors import person
from tests.support.inflight import GAUGE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from signoff.api.context import Api

TURNS, CAP = 50, 4
# seconds for all of it; the run takes well under it
WAIT = 90.0
AGENT_YAML = """\
description: Works a moment, asks for a sign-off, works again (the run-cap load test).
system: You are a test agent.
model:
  provider: scripted
  script: script.yaml
maxTurns: 6
"""
SCRIPT = """\
scenarios:
  - match: '(?P<n>\\d+)'
    steps:
      - call: [{tool: prepare, args: {n: "{n}"}}]
      - call: [{tool: commit, args: {n: "{n}"}}]
      - text: "done {n}: {result.commit}"
"""
RULES = """\
default_decision: deny
rules:
  - name: prepare-anywhere
    scope: "*/*"
    tool: prepare
    decision: allow
  - name: commit-needs-a-sign-off
    scope: "*/*"
    tool: commit
    decision: ask
"""
TOOLS = """\
import time

from signoff.tools import tool
from tests.support.inflight import GAUGE


@tool(safe=True)
def prepare(n: str) -> str:
    \"\"\"Prepare item n.\"\"\"
    with GAUGE.inside():
        time.sleep(0.25)
    return f"prepared {n}"


@tool(idempotent=True)
def commit(n: str) -> str:
    \"\"\"Commit item n.\"\"\"
    with GAUGE.inside():
        time.sleep(0.25)
    return f"committed {n}"
"""


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("capped-agents")
    folder = root / "capped"
    folder.mkdir()
    for name, text in {
        "agent.yaml": AGENT_YAML,
        "script.yaml": SCRIPT,
        "actauth.yml": RULES,
        "tools.py": TOOLS,
    }.items():
        (folder / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def stack(agents: Path) -> Iterator[LocalStack]:
    console = io.StringIO()
    settings = StackSettings(
        port=0,
        console=console,
        logs=console,
        agents=agents,
        parameters={"MaxConcurrentRuns": str(CAP), "RunSlotWaitSeconds": "30"},
    )
    with LocalStack(settings) as local:
        yield local


def wait_for(check: Callable[[], Any], what: str, every: float) -> Any:
    # every: the emulator serves one request at a time, so the checks are spaced out
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def start_and_approve(api: Api, n: int) -> tuple[str, str]:
    """Start turn ``n``, approve its pause once it shows, as the two functions do.

    Returns: the session id and how the approval went on (finished here, or deferred).
    """
    # what POST /agents/{name}/messages does
    started = api.turns.send("capped", f"item {n}", tenant="default", environment=api.environment)
    if started.status == "running":
        api.continuations.schedule(started.session_id)
    session_id = started.session_id

    def paused() -> str | None:
        record = api.sessions.load(session_id)
        return record.pending_id if record is not None and record.status == "paused" else None

    # what POST /approvals/{id}/approve does
    pending_id = started.pending.id if started.pending else wait_for(paused, f"turn {n}", 0.5)
    decided = api.turns.decide(
        pending_id,
        Approve(),
        person("load", "api"),
        schedule=api.continuations.schedule,
    )
    assert decided.result is not None
    return session_id, decided.result.status


def test_fifty_starts_and_resumes_never_run_more_than_four_at_once(stack: LocalStack) -> None:
    GAUGE.reset()
    api = stack.message_api()

    with ThreadPoolExecutor(max_workers=TURNS) as pool:
        started = list(pool.map(lambda n: start_and_approve(api, n), range(TURNS)))

    def finished() -> dict[int, str | None] | None:
        records = [api.sessions.load(session_id) for session_id, _ in started]
        done = {n: r.text for n, r in enumerate(records) if r is not None and r.status == "done"}
        return done if len(done) == TURNS else None

    # every turn finished with its own result: nothing lost
    texts = wait_for(finished, "every turn to finish", 1.0)
    assert texts == {n: f"done {n}: committed {n}" for n in range(TURNS)}
    # the cap was felt: some resumes found every slot taken and were deferred
    assert {status for _, status in started} <= {"finished", "running"}
    # each tool ran exactly once per turn, and never more than CAP turns ran at once
    assert GAUGE.entered == 2 * TURNS
    assert GAUGE.overlap() == GAUGE.most
    assert 2 <= GAUGE.most <= CAP
    # every slot was given back: the deployment's one pool (four slots) holds no lease
    table = boto3.resource("dynamodb").Table(stack.resources.tables["SignoffTable"])
    slots = table.get_item(Key={"pk": "RUN#all#0", "sk": "POOL"}, ConsistentRead=True)["Item"]
    assert set(slots) == {"pk", "sk", "ttl"}
