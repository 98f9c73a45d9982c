"""One turn, every transport, the same events (PROTOCOL.md v1, seed 000; docs/protocol.md).

The same scripted turns are driven over the protocol's transports and what each
carries is compared:

- **NDJSON**: ``signoff run --json`` (a real subprocess; one event per line).
- **SSE**: ``POST /agents/{name}/messages/stream`` on the local stack.
- **plain HTTP**: ``POST /agents/{name}/messages`` (the 200 / 202 family, JSON).
- **status**: ``GET /agents/{name}/sessions/{id}`` after the turn.
- **long-poll**: the status route with ``?after=N&wait=S`` while the turn runs.
- **signoff.client** over SSE, long-poll and ``auto`` (and ``signoff send``,
  which prints what ``signoff run`` prints), with connections dropped mid-turn.

The turns: one that finishes, one that pauses for an approval which is then
given (or denied), one that asks a question which is answered, one whose
model asks for a batch of calls at once, a follow-up message in the same
session, and one whose model fails. What a transport legitimately leaves out, from PROTOCOL.md and
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
import threading
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from signoff.client import Client, Transport, Turn
from signoff.errors import Absent
from signoff.events import dump
from signoff.ids import new_id
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
QUESTION = "which order was it?"
ANSWER = "A-1002"

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
  - match: '(?i)which order'
    steps:
      - call:
          - tool: ask_user
            args: {question: "Which order?", options: ["A-1001", "A-1002"]}
      - call: [{tool: lookup_order, args: {orderId: "{result.ask_user}"}}]
      - text: "Order {result.ask_user} costs {result.lookup_order.total}."
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
# The longest ``?wait=`` the status route takes (API Gateway's 30 s less a margin): a
# long-poll that answers in less than half of it was ended by what it waited for.
LONGEST_WAIT = 25


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


def ndjson(
    agents: Path, home: Path, agent: str, message: str, *, decide: tuple[str, ...] = ("--approve",)
) -> tuple[int, list[dict[str, Any]]]:
    """``signoff run --json`` (approving any ask with ``--approve``): exit code, events."""
    return signoff(agents, home, "run", agent, "--json", *decide, message)


def signoff(agents: Path, home: Path, *arguments: str) -> tuple[int, list[dict[str, Any]]]:
    """The CLI in a subprocess: its exit code and the NDJSON events it printed."""
    env = {**os.environ, "SIGNOFF_HOME": str(home), **KEY_ENV}
    env.pop("SIGNOFF_MODEL", None)
    command = [sys.executable, "-m", "signoff_dev.cli.main", "--agents", str(agents)]
    done = subprocess.run(
        [*command, *arguments],
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


def sse(
    http: httpx.Client, agent: str, message: str, decide: str = "approve"
) -> list[dict[str, Any]]:
    """The SSE stream, deciding through the approval route whatever it asks (``decide``),
    answering ``ANSWER`` through the question route."""
    events: list[dict[str, Any]] = []
    with http.stream("POST", f"/agents/{agent}/messages/stream", json={"message": message}) as r:
        assert r.status_code == 200, r.read()
        for event in sse_events(r.iter_lines()):
            events.append(event)
            if event["type"] == "approval:pending":
                decided = http.post(f"/approvals/{event['id']}/{decide}", json={})
                assert decided.status_code == 200, decided.text
            if event["type"] == "question:pending":
                path = f"/questions/{event['id']}/answer"
                answered = http.post(path, json={"answer": ANSWER})
                assert answered.status_code == 200, answered.text
    return validated(events)


def plain(
    http: httpx.Client, agent: str, message: str, *, session_id: str | None = None
) -> list[httpx.Response]:
    """The plain route, then the approval (or question) route for each 202: every response."""
    body = {"message": message} | ({"sessionId": session_id} if session_id else {})
    responses = [http.post(f"/agents/{agent}/messages", json=body)]
    while responses[-1].status_code == 202:
        body = responses[-1].json()
        if body["type"] == "question":
            responses.append(http.post(body["answerUrl"], json={"answer": ANSWER}))
            continue
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
        if event["type"] in ("approval:pending", "question:pending"):
            event["id"] = ids.setdefault(event["id"], f"<pending-{len(ids)}>")
            event["requestedAt"] = "<requested-at>"
        if event["type"] == "question:pending":
            event["sessionId"] = "<session>"
        if event["type"] == "tool:started" and "; approved by " in event["detailText"]:
            event["detailText"] = event["detailText"].split("; approved by ")[0] + "; approved"
        if event["type"] == "tool:result" and event["detailText"].startswith("Denied by "):
            # who denied, and why if they said: per decision, not per transport
            event["detailText"] = "Denied by <actor>."
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


# --- long-poll on the status route ---------------------------------------------------------


def long_poll(http: httpx.Client, agent: str, message: str) -> tuple[list[dict[str, Any]], dict]:
    """The plain route in the background; the status route's long-poll collects the events.

    Returns the events as the watcher got them and the last status body.
    """
    session_id = new_id()
    posted = threading.Thread(
        target=lambda: plain(http, agent, message, session_id=session_id), daemon=True
    )
    posted.start()
    events: list[dict[str, Any]] = []
    after = 0
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        path = f"/agents/{agent}/sessions/{session_id}"
        response = http.get(path, params={"after": after, "wait": 5})
        if response.status_code == 404:  # the message has not created the session yet
            time.sleep(0.01)
            continue
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        events += validated(body["events"])
        after = body["next"]
        if body["status"] in ("done", "idle") and not posted.is_alive():
            return events, body
    raise AssertionError(f"the turn of {message!r} did not end")


@pytest.mark.parametrize(
    "message", [FINISHES, ASKS, BATCH, QUESTION], ids=["finishes", "approval", "batch", "question"]
)
def test_the_status_routes_long_poll_carries_the_same_events(
    http: httpx.Client, message: str
) -> None:
    stream = sse(http, "shop", message)
    events, last = long_poll(http, "shop", message)
    assert per_run(events) == per_run(engine_events(stream))
    assert last["status"] == "done" and done_of(last) == stream[-1]


def test_a_long_poll_answers_as_soon_as_the_decided_turn_commits(http: httpx.Client) -> None:
    paused = http.post("/agents/shop/messages", json={"message": ASKS})
    assert paused.status_code == 202, paused.text
    body = paused.json()
    after = len(body["events"])
    answered: dict[str, Any] = {}

    def watch() -> None:
        started = time.monotonic()
        response = http.get(
            body["statusUrl"],
            params={"after": after, "wait": LONGEST_WAIT},
            timeout=LONGEST_WAIT + WAIT,  # a wait that runs out answers, and fails below
        )
        answered.update(response=response, took=time.monotonic() - started)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(1.0)
    assert not answered, "nothing was committed after N yet: the watcher still waits"
    assert http.post(body["approveUrl"], json={}).status_code == 200
    watcher.join(LONGEST_WAIT + WAIT)
    response = answered["response"]
    assert response.status_code == 200, response.text
    woken = response.json()
    assert woken["events"], "the answer carries the events committed after N"
    assert woken["next"] == after + len(woken["events"])
    # The commit ended the wait, not the clock: a wait that runs out answers no sooner
    # than LONGEST_WAIT, so half of it is room for a loaded machine, not a speed bound.
    assert answered["took"] < LONGEST_WAIT / 2, f"answered after {answered['took']:.1f} s"


def test_a_long_polls_wait_is_validated_and_a_finished_turn_answers_at_once(
    http: httpx.Client,
) -> None:
    done = http.post("/agents/shop/messages", json={"message": FINISHES}).json()
    path = f"/agents/shop/sessions/{done['sessionId']}"
    assert http.get(path, params={"wait": LONGEST_WAIT + 1}).status_code == 400
    assert http.get(path, params={"wait": -1}).status_code == 400
    # A done turn adds no event: the route answers without waiting, not when the wait
    # runs out (half the wait is room for a loaded machine, not a speed bound).
    started = time.monotonic()
    body = http.get(
        path, params={"after": 99, "wait": LONGEST_WAIT}, timeout=LONGEST_WAIT + WAIT
    ).json()
    took = time.monotonic() - started
    assert took < LONGEST_WAIT / 2, f"answered after {took:.1f} s of a {LONGEST_WAIT} s wait"
    assert body["events"] == [] and body["status"] == "done"


# --- signoff.client over each transport ------------------------------------------------------


class Cutting(httpx.BaseTransport):
    """Forwards to the stack; cuts the first request whose path ends with ``suffix``.

    ``frames`` set: the answer's body is cut after that many SSE frames (the rest
    of the chunk that holds the cut may be cut mid-frame). ``frames`` None: the
    request reaches the stack, and its answer is lost.
    """

    def __init__(self, suffix: str, frames: int | None = None, method: str = "POST") -> None:
        self.inner = httpx.HTTPTransport()
        self.suffix, self.frames, self.method = suffix, frames, method
        self.cuts = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if self.cuts or request.method != self.method or not request.url.path.endswith(self.suffix):
            return response
        self.cuts += 1
        if self.frames is None:
            response.read()  # the server did its work; the client never hears of it
            response.close()
            raise httpx.ReadError("connection reset (test)", request=request)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_CutStream(response, self.frames),
            request=request,
        )


class _CutStream(httpx.SyncByteStream):
    def __init__(self, response: httpx.Response, frames: int) -> None:
        self.response, self.frames = response, frames

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self.response.stream:
            seen += chunk.count(b"\n\n")
            if seen >= self.frames:
                cut = len(chunk) // 2 if seen > self.frames else len(chunk)
                yield chunk[:cut]
                self.response.close()
                raise httpx.ReadError("connection reset mid-turn (test)")
            yield chunk


class NoStream(httpx.BaseTransport):
    """A stack without the stream route, as a deployed HTTP API answers it."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.refused = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/messages/stream"):
            self.refused += 1
            path = request.url.path
            detail = {"error": "not_found", "detail": f"no route POST {path}"}
            return httpx.Response(404, json=detail, request=request)
        return self.inner.handle_request(request)


def client_for(
    stack: LocalStack, transport: Transport, through: httpx.BaseTransport | None = None
) -> Client:
    client = Client(stack.url, transport=transport, wait=5)
    if through is not None:
        client.http.close()
        client.http = httpx.Client(base_url=stack.url, transport=through, timeout=WAIT)
    return client


def via_client(
    client: Client, agent: str, message: str, decide: str = "approve"
) -> tuple[list[dict[str, Any]], Turn]:
    """The turn through the client, deciding what it asks as ``sse`` does: its events."""
    turn = client.send(agent, message)
    events = []
    for event in turn:
        events.append(dump(event))
        pending = turn.pending
        if pending is not None and pending.event.type == "question:pending":
            pending.answer(ANSWER)
        elif pending is not None:
            pending.approve() if decide == "approve" else pending.deny()
    return validated(events), turn


@pytest.mark.parametrize("transport", ["sse", "poll", "auto"])
@pytest.mark.parametrize(
    ("message", "decide"),
    [
        (FINISHES, "approve"),
        (ASKS, "approve"),
        (ASKS, "deny"),
        (QUESTION, "approve"),
        (BATCH, "approve"),
    ],
    ids=["finishes", "approved", "denied", "question", "batch"],
)
def test_the_client_yields_the_streams_events_on_every_transport(
    stack: LocalStack, http: httpx.Client, transport: Transport, message: str, decide: str
) -> None:
    stream = sse(http, "shop", message, decide)
    with client_for(stack, transport) as client:
        events, turn = via_client(client, "shop", message, decide)
    assert per_run(events) == per_run(stream)
    assert turn.done is not None and dump(turn.done) == stream[-1]
    assert turn.pending is None and turn.error is None


def test_the_client_falls_back_to_long_poll_where_there_is_no_stream(
    stack: LocalStack, http: httpx.Client
) -> None:
    reference = sse(http, "shop", ASKS)
    refusing = NoStream()
    with client_for(stack, "auto", refusing) as client:
        first, _ = via_client(client, "shop", ASKS)
        second, _ = via_client(client, "shop", FINISHES)
        assert client.transport == "poll"
    assert refusing.refused == 1, "asked for the stream once, then remembered it is absent"
    assert per_run(first) == per_run(reference)
    assert [e["type"] for e in second][-1] == "done"
    with client_for(stack, "sse", NoStream()) as client, pytest.raises(Absent, match="no route"):
        via_client(client, "shop", FINISHES)


@pytest.mark.parametrize("transport", ["sse", "poll"])
def test_the_client_ends_a_failed_turn_with_its_error(
    stack: LocalStack, http: httpx.Client, transport: Transport
) -> None:
    stream = sse(http, "broken", FAILS)
    with client_for(stack, transport) as client:
        events, turn = via_client(client, "broken", FAILS)
        assert per_run(events) == per_run(stream)
        assert turn.error == stream[-1]["error"] and turn.done is None
        with pytest.raises(Absent, match="unknown agent"):
            via_client(client, "nobody", FAILS)


def test_the_client_continues_a_session_and_reads_its_events(stack: LocalStack) -> None:
    with client_for(stack, "poll") as client:
        first, turn = via_client(client, "shop", FINISHES)
        session = turn.session_id
        follow_up = client.send("shop", BATCH, session=session)
        second = [dump(event) for event in follow_up]
        assert follow_up.session_id == session
        # Only the follow-up's events: the session's first turn is not yielded again.
        assert second[0] == {"type": "session", "sessionId": session}
        assert second[-1]["type"] == "done" and "Both found." in second[-1]["text"]
        logged = [dump(e) for e in client.session(session, agent="shop").events()]
        assert logged == engine_events(first) + engine_events(second)
        after = len(engine_events(first))
        again = [dump(e) for e in client.session(session, agent="shop").events(after=after)]
        assert again == engine_events(second)


@pytest.mark.parametrize("frames", [1, 2, 4, 6, 9])
def test_an_sse_connection_dropped_mid_turn_resumes_without_a_lost_or_doubled_event(
    stack: LocalStack, http: httpx.Client, frames: int
) -> None:
    reference = sse(http, "shop", ASKS)
    cutting = Cutting("/messages/stream", frames=frames)
    with client_for(stack, "sse", cutting) as client:
        events, turn = via_client(client, "shop", ASKS)
    assert cutting.cuts == 1
    assert per_run(events) == per_run(reference)
    assert turn.done is not None


@pytest.mark.parametrize(
    ("suffix", "method"),
    [("/messages", "POST"), ("/approve", "POST")],
    ids=["message-answer-lost", "decision-answer-lost"],
)
def test_a_long_poll_turn_whose_connection_drops_resumes_without_a_lost_or_doubled_event(
    stack: LocalStack, http: httpx.Client, suffix: str, method: str
) -> None:
    reference = sse(http, "shop", ASKS)
    cutting = Cutting(suffix, method=method)
    with client_for(stack, "poll", cutting) as client:
        events, turn = via_client(client, "shop", ASKS)
    assert cutting.cuts == 1
    assert per_run(events) == per_run(reference)
    assert turn.done is not None


# --- signoff send: run's output, from a running stack ----------------------------------------


@pytest.mark.parametrize("transport", ["auto", "poll"])
@pytest.mark.parametrize(
    ("message", "decide", "sent"),
    [
        (ASKS, ("--deny",), ("--deny", "--reason", "not this one")),
        (ASKS, ("--approve",), ("--approve",)),
        (FINISHES, (), ()),
    ],
    ids=["denied", "approved", "finished"],
)
def test_signoff_send_prints_what_signoff_run_prints(
    agents: Path,
    tmp_path: Path,
    stack: LocalStack,
    transport: str,
    message: str,
    decide: tuple[str, ...],
    sent: tuple[str, ...],
) -> None:
    ran_code, ran = ndjson(agents, tmp_path, "shop", message, decide=decide)
    url = ("--url", stack.url, "--transport", transport)
    sent_code, sent_events = signoff(
        agents, tmp_path, "send", *url, "shop", "--json", *sent, message
    )
    assert sent_code == ran_code == 0
    assert per_run(sent_events) == per_run(ran)
    # The reason given with --deny (--reason) reaches the denied call's result.
    results = [e.get("detailText", "") for e in sent_events if e["type"] == "tool:result"]
    denied = [text for text in results if text.startswith("Denied by ")]
    assert denied == (["Denied by anonymous@default (not this one)."] if "--deny" in sent else [])
    if "--deny" in decide:
        assert ran[-1] == {
            "type": "done",
            "text": "Not done: issue_refund was denied.",
            "stopReason": "denied",
        }


def test_signoff_send_exits_as_run_does_when_nothing_can_answer_or_the_turn_fails(
    agents: Path, tmp_path: Path, stack: LocalStack
) -> None:
    unanswered = signoff(agents, tmp_path, "send", "--url", stack.url, "shop", "--json", ASKS)
    assert unanswered[0] == ndjson(agents, tmp_path, "shop", ASKS, decide=())[0] == 2
    failed_code, failed = signoff(
        agents, tmp_path, "send", "--url", stack.url, "broken", "--json", FAILS
    )
    run_code, ran = ndjson(agents, tmp_path, "broken", FAILS)
    assert failed_code == run_code == 1
    assert per_run(failed) == per_run(ran)
    unknown = signoff(agents, tmp_path, "send", "--url", stack.url, "nobody", "--json", FAILS)
    assert unknown == (2, [])
