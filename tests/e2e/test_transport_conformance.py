"""One turn, four transports, the same events (PROTOCOL.md v1, seed 000; docs/protocol.md).

The same scripted turns are driven over the protocol's transports and what each
carries is compared:

- **NDJSON**: ``signoff run --json`` (a real subprocess; one event per line).
- **SSE**: ``POST /agents/{name}/messages/stream`` on the local stack.
- **plain HTTP**: ``POST /agents/{name}/messages`` (the 200 / 202 family, JSON).
- **status**: ``GET /agents/{name}/sessions/{id}`` after the turn.

The turns: one that finishes, one that pauses for an approval which is then
given, one whose model asks for a batch of calls at once, and one whose model
fails. What a transport legitimately leaves out, from PROTOCOL.md and
docs/protocol.md, and nothing more:

- ``session`` and ``done`` are adapter events of the *streamed* transports
  (NDJSON, SSE): the first and the last line. The plain response's ``events``
  array and the status route's are the engine events between them; the body
  carries what they would say (``sessionId``; ``text`` and ``stopReason``).
- A pause: the plain route answers 202 with the events so far (up to
  ``approval:pending``) and the approval route answers with the whole turn's
  events; the streamed transports carry the resumed events on the same stream
  (the CLI's approval is live, from ``--approve``; the SSE client approves
  through the approval route).
- A failure after the turn started: the streamed transports end with one
  ``error`` event instead of ``done``; the plain route answers with the API's
  JSON error, whose ``detail`` is that event's ``error``; the status route
  shows the same events and the same ``error`` (logged when the turn was
  abandoned), and the session is free for the next message.
- Per run, not per transport: session ids, the pending item's ``id`` and
  ``requestedAt``, and who approved (``approved by <actor>`` in the approved
  call's ``detailText``: ``cli-flag`` in the terminal, the API's caller over HTTP).

The lifecycle announcements follow the seed's channel rule on the same stack:
the plain (``http``) turn announces its start and finish, the SSE
(``http_stream``) turn nothing, before or after its resume.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from signoff_dev.local.stack import LocalStack, StackSettings
from tests.conftest import ROOT, validate_event
from tests.support.local_stack import WAIT, eventually
from tests.support.sse import sse_events

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

FINISHES = "where is order A-1001?"
ASKS = "refund order A-1001 please"
BATCH = "compare orders A-1001 and A-1002"
FAILS = "hello"

# The shop agent: two reads and a refund that needs a person in production.
SHOP_YAML = """\
description: Conformance shop.
system: You are a shop agent.
model: {provider: scripted, script: script.yaml}
maxTurns: 6
notify:
  local-webhook: [approval, run_start, run_finish]
"""
SHOP_RULES = """\
default_decision: deny
rules:
  - {name: lookups, scope: "*/*", tool: lookup_order, decision: allow}
  - {name: notes, scope: "*/*", tool: add_note, decision: allow}
  - {name: refunds-need-approval, scope: "*/production/*", tool: issue_refund, decision: ask}
"""
SHOP_TOOLS = '''\
"""Tools of the conformance shop."""

from signoff.tools import tool

ORDERS = {"A-1001": 42.0, "A-1002": 58.5}


@tool(safe=True)
def lookup_order(orderId: str) -> dict[str, object]:
    """An order and what was paid."""
    return {"orderId": orderId, "total": ORDERS.get(orderId, 0.0)}


@tool
def add_note(text: str) -> str:
    """A note on the case file (a side effect: runs alone)."""
    return "noted"


@tool
def issue_refund(orderId: str, amount: float) -> dict[str, object]:
    """Refund an order."""
    return {"orderId": orderId, "refunded": amount}
'''
SHOP_SCRIPT = """\
scenarios:
  - match: '(?i)compare orders (?P<a>A-\\d+) and (?P<b>A-\\d+)'
    steps:
      - text: "Looking both up."
        call:
          - {tool: lookup_order, args: {orderId: "{a}"}}
          - {tool: lookup_order, args: {orderId: "{b}"}}
          - {tool: add_note, args: {text: "compared {a} and {b}"}}
      - text: "Both found."
  - match: '(?i)refund order (?P<order>A-\\d+)'
    steps:
      - call: [{tool: lookup_order, args: {orderId: "{order}"}}]
      - text: "Refunding."
        call:
          - tool: issue_refund
            args: {orderId: "{order}", amount: "{result.lookup_order.total}"}
      - text: "Refunded {result.issue_refund.refunded}."
        otherwise: "Not refunded."
  - match: '(?i)where is order (?P<order>A-\\d+)'
    steps:
      - call: [{tool: lookup_order, args: {orderId: "{order}"}}]
      - text: "Order {order} costs {result.lookup_order.total}."
"""
# A model nobody answers for: the discard port, where nothing listens.
BROKEN_YAML = """\
description: Conformance agent whose model always fails.
system: You are a test agent.
model:
  provider: openai
  model: gpt-test
  baseUrl: http://127.0.0.1:9/v1
  apiKeyEnv: CONFORMANCE_MODEL_KEY
"""
CHANNELS = """\
channels:
  local-webhook:
    type: webhook
    url: http://127.0.0.1:3000/_local/webhook
    secret: {secret: local-webhook}
    allowPrivate: true
"""
KEY_ENV = {"CONFORMANCE_MODEL_KEY": "sk-test"}


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conformance") / "agents"
    shop, broken = root / "shop", root / "broken"
    shop.mkdir(parents=True)
    broken.mkdir()
    (root / "channels.yaml").write_text(CHANNELS)
    (shop / "agent.yaml").write_text(SHOP_YAML)
    (shop / "actauth.yml").write_text(SHOP_RULES)
    (shop / "tools.py").write_text(SHOP_TOOLS)
    (shop / "script.yaml").write_text(SHOP_SCRIPT)
    (broken / "agent.yaml").write_text(BROKEN_YAML)
    (broken / "actauth.yml").write_text("default_decision: allow\n")
    return root


@pytest.fixture(scope="module")
def stack(agents: Path) -> Iterator[LocalStack]:
    saved = {name: os.environ.get(name) for name in KEY_ENV}
    os.environ.update(KEY_ENV)
    console = io.StringIO()
    local = LocalStack(StackSettings(port=0, console=console, logs=console, agents=agents))
    local.start()
    try:
        yield local
    finally:
        local.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture
def http(stack: LocalStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=WAIT) as client:
        yield client


# --- the four transports -----------------------------------------------------------------


def ndjson(agents: Path, home: Path, agent: str, message: str) -> tuple[int, list[dict[str, Any]]]:
    """``signoff run --json`` (approving any ask with ``--approve``): exit code, events."""
    env = {**os.environ, "SIGNOFF_HOME": str(home), **KEY_ENV}
    env.pop("SIGNOFF_MODEL", None)
    command = [sys.executable, "-m", "signoff_dev.cli.main", "--agents", str(agents)]
    done = subprocess.run(
        [*command, "run", agent, "--json", "--approve", message],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, validated(events)


def sse(http: httpx.Client, agent: str, message: str) -> list[dict[str, Any]]:
    """The SSE stream, approving through the approval route whatever it asks."""
    events: list[dict[str, Any]] = []
    with http.stream("POST", f"/agents/{agent}/messages/stream", json={"message": message}) as r:
        assert r.status_code == 200, r.read()
        for event in sse_events(r.iter_lines()):
            events.append(event)
            if event["type"] == "approval:pending":
                approved = http.post(f"/approvals/{event['id']}/approve", json={})
                assert approved.status_code == 200, approved.text
    return validated(events)


def plain(http: httpx.Client, agent: str, message: str) -> list[httpx.Response]:
    """The plain route, then the approval route for each 202: every response in order."""
    responses = [http.post(f"/agents/{agent}/messages", json={"message": message})]
    while responses[-1].status_code == 202:
        body = responses[-1].json()
        assert body["type"] == "approval", body
        responses.append(http.post(body["approveUrl"], json={}))
    for response in responses:
        if response.status_code in (200, 202):
            validated(response.json()["events"])
    return responses


def status(http: httpx.Client, agent: str, session_id: str) -> dict[str, Any]:
    response = http.get(f"/agents/{agent}/sessions/{session_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    validated(body["events"])
    return body


def validated(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for event in events:
        validate_event(event)
    return events


# --- what differs per run, not per transport ---------------------------------------------


def per_run(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with run-specific values replaced by placeholders (in order of use)."""
    ids: dict[str, str] = {}
    out = []
    for event in events:
        event = dict(event)
        if event["type"] == "session":
            event["sessionId"] = "<session>"
        if event["type"] == "approval:pending":
            event["id"] = ids.setdefault(event["id"], f"<pending-{len(ids)}>")
            event["requestedAt"] = "<requested-at>"
        if event["type"] == "tool:started" and "; approved by " in event["detailText"]:
            event["detailText"] = event["detailText"].split("; approved by ")[0] + "; approved"
        out.append(event)
    return out


def engine_events(streamed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A streamed turn without its adapter frame: what the plain ``events`` array holds."""
    assert streamed[0]["type"] == "session"
    assert [e["type"] for e in streamed].count("session") == 1
    assert streamed[-1]["type"] in ("done", "error")
    assert sum(e["type"] in ("done", "error") for e in streamed) == 1, "one terminal event"
    return streamed[1:-1]


def done_of(body: dict[str, Any]) -> dict[str, Any]:
    """The ``done`` event a plain 200 body (or a done status) stands for."""
    done = {"type": "done", "text": body["text"]}
    if body.get("stopReason"):
        done["stopReason"] = body["stopReason"]
    return done


# --- the turns ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "approvals"),
    [(FINISHES, 0), (ASKS, 1), (BATCH, 0)],
    ids=["finishes", "approval", "batch"],
)
def test_a_turn_carries_the_same_events_on_all_four_transports(
    agents: Path, tmp_path: Path, http: httpx.Client, message: str, approvals: int
) -> None:
    exit_code, cli = ndjson(agents, tmp_path, "shop", message)
    assert exit_code == 0
    stream = sse(http, "shop", message)
    responses = plain(http, "shop", message)
    *paused, final = responses
    assert [r.status_code for r in paused] == [202] * approvals and final.status_code == 200
    body = final.json()
    after = status(http, "shop", body["sessionId"])

    # NDJSON and SSE: the same stream, line for line (session first, one done last).
    assert per_run(cli) == per_run(stream)
    assert stream[-1]["type"] == "done"
    # Plain HTTP: the events between session and done; the body says the rest.
    assert per_run(body["events"]) == per_run(engine_events(stream))
    assert done_of(body) == stream[-1]
    # A 202 carries the events so far, ending with the pending item it names.
    for response in paused:
        pending = response.json()
        so_far = pending["events"]
        assert per_run(so_far) == per_run(body["events"][: len(so_far)])
        assert so_far[-1]["type"] == "approval:pending" and so_far[-1]["id"] == pending["id"]
    # Status: the session's committed events, the same again, and the finished text.
    assert after["status"] == "done"
    assert per_run(after["events"]) == per_run(body["events"])
    assert done_of(after) == stream[-1]


def test_the_batch_decides_and_starts_every_call_before_any_runs_on_every_transport(
    agents: Path, tmp_path: Path, http: httpx.Client
) -> None:
    _, cli = ndjson(agents, tmp_path, "shop", BATCH)
    body = plain(http, "shop", BATCH)[-1].json()
    for events in (engine_events(cli), engine_events(sse(http, "shop", BATCH)), body["events"]):
        batch = [
            f"{e['type']} {e.get('tool') or e.get('name')}"
            for e in events
            if e["type"] in ("actauth:decision", "tool:started", "toollane:result", "tool:result")
        ]
        assert batch == [
            "actauth:decision lookup_order",
            "tool:started lookup_order",
            "actauth:decision lookup_order",
            "tool:started lookup_order",
            "actauth:decision add_note",
            "tool:started add_note",
            "toollane:result lookup_order",
            "tool:result lookup_order",
            "toollane:result lookup_order",
            "tool:result lookup_order",
            "toollane:result add_note",
            "tool:result add_note",
        ]


def test_a_failing_model_ends_each_transport_with_its_error(
    agents: Path, tmp_path: Path, http: httpx.Client
) -> None:
    exit_code, cli = ndjson(agents, tmp_path, "broken", FAILS)
    stream = sse(http, "broken", FAILS)
    session_id = "conformance-failing-session"
    failed = http.post("/agents/broken/messages", json={"message": FAILS, "sessionId": session_id})

    # NDJSON and SSE: session, what ran, then one error event and no done.
    assert exit_code == 1
    assert per_run(cli) == per_run(stream)
    assert [e["type"] for e in stream] == ["session", "budget:check", "error"]
    # Plain HTTP: the API's JSON error, saying what the streamed error event says.
    assert failed.status_code == 503, failed.text
    assert failed.json()["error"] == "model_unavailable"
    assert failed.json()["detail"] == stream[-1]["error"] == cli[-1]["error"]
    # Status: the same events, the error logged; the session is free again, not
    # "running" for good (a second message is taken, and fails the same way).
    after = status(http, "broken", session_id)
    assert after["events"] == stream[1:]
    assert after["status"] == "idle" and "text" not in after
    again = http.post("/agents/broken/messages", json={"message": FAILS, "sessionId": session_id})
    assert again.status_code == 503, again.text
    assert status(http, "broken", session_id)["events"] == stream[1:] * 2


# --- run_start / run_finish on the same stack ---------------------------------------------


def announced(http: httpx.Client, session_id: str) -> list[str]:
    """The kinds of lifecycle notifications the local webhook sink got for a session."""
    return [
        received["notification"]["kind"]
        for received in http.get("/_local/notifications").json()["notifications"]
        if received["notification"].get("sessionId") == session_id
        and received["notification"]["kind"] in ("info", "result")
    ]


def test_the_plain_turn_is_announced_and_the_streamed_turn_never(http: httpx.Client) -> None:
    responses = plain(http, "shop", ASKS)
    plain_session = responses[-1].json()["sessionId"]
    stream = sse(http, "shop", ASKS)
    streamed_session = stream[0]["sessionId"]
    # The sink also gets each approval; once it has the streamed run's, any
    # announcement committed with that run would have been sent before it.
    eventually(
        # In any order: the notifier takes the queue's messages as they come.
        lambda: sorted(announced(http, plain_session)) == ["info", "info", "result"],
        "the plain run's start, resumed start and finish",
    )
    pending = next(e["id"] for e in stream if e["type"] == "approval:pending")
    eventually(
        lambda: any(
            r["notification"].get("pendingId") == pending
            for r in http.get("/_local/notifications").json()["notifications"]
        ),
        "the streamed run's approval notification",
    )
    assert announced(http, streamed_session) == []
