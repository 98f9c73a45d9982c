"""How soon a committed event reaches a watching client, and what watching costs in reads.

Workload: the local stack (``signoff dev`` in this process, on moto) serves a
generated agent whose scripted model calls a safe ``tick`` tool (a few ms of
work) once per step for ``STEPS`` steps. The turn is started on the SSE route
(``POST /agents/bench/messages/stream``), which runs it in its own thread; while
it runs, a second client follows the same session by long-poll
(``GET /agents/bench/sessions/{id}?after=N&wait=S``).

**Commit time** is the store's write: ``TableSessions.commit`` is wrapped, and the
moment its DynamoDB transaction returns is the commit time of every event of the
chunk it wrote (the events' own timestamps are when the engine made them, not
when they were committed). An event's **latency** is its arrival at the client
(the frame or the long-poll answer read, ``time.perf_counter`` in the same
process) minus that commit time. The SSE route sends a running turn's events as
the engine makes them, before their step commits, so its figures are at or below
zero for the live part of a turn; the long-poll client can see an event only
once it is committed.

A waiting long-poll wakes when a commit to its session is made in the same
process (``signoff.store.signal``): on the local stack the turn and the status
route share one process, so it does. On Lambda they never share a sandbox and
the wait finds a commit by its backed-off reads alone (50 ms, doubling to 0.2 s
while the turn runs), so the long-poll is timed twice: as the local stack serves it, and with the
wake-up switched off, as a deployed API would find the commits.

**Reads per waiting minute**: a turn pauses for an approval (a ``hold`` tool the
rules ask about) and a client watches it for ``WINDOW`` seconds: on SSE, the stream
that started it, which follows the log once the turn paused; on long-poll, a loop
of ``?after=N&wait=25``. The reads counted are the store's on that session
(``TableSessions.load``, ``read_log`` and ``read_log_back``, ``TableAudit.for_subject``
— the decisions — and ``TablePendingItems.get`` of its pending item), scaled to one
minute.

    python bench/live_latency.py        # `make bench` runs it
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import httpx

if TYPE_CHECKING:
    from collections.abc import Iterator

STEPS: Final = 60
WINDOW: Final = 20.0
WAIT: Final = 25  # the long-poll's ?wait, API Gateway's limit minus a margin
TIMEOUT: Final = 60.0

AGENT_YAML: Final = """\
description: Live latency bench.
system: You are a bench agent.
model: {provider: scripted, script: script.yaml}
maxTurns: 1000
budget: {tokens: 100000000}
"""
RULES: Final = """\
default_decision: allow
rules:
  - {name: holds-need-approval, scope: "*/production/*", tool: hold, decision: ask}
"""
TOOLS: Final = '''\
"""Tools of the live latency bench."""

import time

from signoff.tools import tool


@tool(safe=True)
def tick(i: int) -> int:
    """A step's few milliseconds of work."""
    time.sleep(0.005)
    return i


@tool
def hold() -> str:
    """Asks a person first (the rules say so)."""
    return "held"
'''
CHANNELS: Final = "channels: {}\n"


def script(steps: int) -> str:
    ticks = [{"call": [{"tool": "tick", "args": {"i": i}}]} for i in range(steps)]
    scenarios = [
        {"match": "(?i)^hold", "steps": [{"call": [{"tool": "hold", "args": {}}]}, {"text": "ok"}]},
        {"match": "", "steps": [*ticks, {"text": "ticked"}]},
    ]
    return json.dumps({"scenarios": scenarios})  # JSON is YAML


def write_agents(root: Path, steps: int) -> Path:
    agent = root / "agents" / "bench"
    agent.mkdir(parents=True)
    (root / "agents" / "channels.yaml").write_text(CHANNELS)
    (agent / "agent.yaml").write_text(AGENT_YAML)
    (agent / "actauth.yml").write_text(RULES)
    (agent / "tools.py").write_text(TOOLS)
    (agent / "script.yaml").write_text(script(steps))
    return root / "agents"


# -- the store hooks ------------------------------------------------------------------------


@dataclass
class Recorder:
    """Commit times of each session's chunks, and the store reads per session."""

    commits: dict[str, list[tuple[int, int, float]]] = field(default_factory=dict)
    reads: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def committed(self, session_id: str, seq: int, events: int) -> None:
        with self.lock:
            self.commits.setdefault(session_id, []).append((seq, events, time.perf_counter()))

    def read(self, key: str) -> None:
        with self.lock:
            self.reads.setdefault(key, []).append(time.perf_counter())

    def commit_times(self, session_id: str) -> list[float]:
        """The commit time of each of the session's events, in log order."""
        times: list[float] = []
        for _, count, at in sorted(self.commits.get(session_id, [])):
            times += [at] * count
        return times

    def reads_between(self, keys: tuple[str, ...], start: float, end: float) -> int:
        return sum(start <= at < end for key in keys for at in self.reads.get(key, []))


@contextmanager
def recording() -> Iterator[Recorder]:
    """Wraps the store's session and pending classes (every function's instance) while inside."""
    from signoff.store.audit import TableAudit
    from signoff.store.pending import TablePendingItems
    from signoff.store.sessions import TableSessions

    recorder = Recorder()
    commit, load, read_log = TableSessions.commit, TableSessions.load, TableSessions.read_log
    read_log_back, get, for_subject = (
        TableSessions.read_log_back,
        TablePendingItems.get,
        TableAudit.for_subject,
    )

    def recorded_commit(self: TableSessions, change: Any, *, owner: str) -> Any:
        stored = commit(self, change, owner=owner)
        if change.chunk is not None:
            recorder.committed(
                change.session.session_id, change.chunk.seq, len(change.chunk.events)
            )
        return stored

    def recorded_load(self: TableSessions, session_id: str) -> Any:
        recorder.read(session_id)
        return load(self, session_id)

    def recorded_read_log(self: TableSessions, session_id: str, *, from_seq: int = 0) -> Any:
        recorder.read(session_id)
        return read_log(self, session_id, from_seq=from_seq)

    def recorded_read_log_back(
        self: TableSessions, session_id: str, *, from_seq: int, to_seq: int
    ) -> Any:
        recorder.read(session_id)
        return read_log_back(self, session_id, from_seq=from_seq, to_seq=to_seq)

    def recorded_get(self: TablePendingItems, pending_id: str) -> Any:
        recorder.read(pending_id)
        return get(self, pending_id)

    def recorded_for_subject(self: TableAudit, subject: str, *, rules: bool = True) -> Any:
        recorder.read(subject)
        return for_subject(self, subject, rules=rules)

    patches = {
        (TableSessions, "commit"): recorded_commit,
        (TableSessions, "load"): recorded_load,
        (TableSessions, "read_log"): recorded_read_log,
        (TableSessions, "read_log_back"): recorded_read_log_back,
        (TablePendingItems, "get"): recorded_get,
        (TableAudit, "for_subject"): recorded_for_subject,
    }
    originals = {key: getattr(*key) for key in patches}
    for (owner, name), patched in patches.items():
        setattr(owner, name, patched)
    try:
        yield recorder
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)


# -- the clients ----------------------------------------------------------------------------


def sse_frames(response: httpx.Response) -> Iterator[tuple[dict[str, Any], float]]:
    """Each SSE frame's event and the moment its last line was read."""
    data: str | None = None
    for line in response.iter_lines():
        if line.startswith("data: "):
            data = line.removeprefix("data: ")
        elif not line and data is not None:
            yield json.loads(data), time.perf_counter()
            data = None


def long_poll(
    http: httpx.Client, session_id: str, *, until: float | None = None
) -> list[tuple[dict[str, Any], float]]:
    """The session's events as ``?after=N&wait=S`` answers them, to ``done`` (or ``until``)."""
    arrived: list[tuple[dict[str, Any], float]] = []
    after = 0
    while until is None or time.perf_counter() < until:
        answer = http.get(
            f"/agents/bench/sessions/{session_id}", params={"after": after, "wait": WAIT}
        )
        at = time.perf_counter()
        answer.raise_for_status()
        body = answer.json()
        arrived += [(event, at) for event in body["events"]]
        after = body["next"]
        if body["status"] == "done":
            break
    return arrived


# -- the measurements -----------------------------------------------------------------------


@dataclass(frozen=True)
class Latency:
    """Milliseconds from each event's commit to its arrival, per transport."""

    sse: list[float]
    long_poll: list[float]


def latencies(
    recorder: Recorder, session_id: str, arrived: list[tuple[dict[str, Any], float]]
) -> list[float]:
    """Each engine event's arrival minus its chunk's commit, in ms (``session`` and
    ``done`` are no log events)."""
    committed = recorder.commit_times(session_id)
    engine = [at for event, at in arrived if event["type"] not in ("session", "done")]
    if len(engine) != len(committed):
        raise AssertionError(f"{len(engine)} events arrived, {len(committed)} committed")
    return [(at - commit) * 1000 for at, commit in zip(engine, committed, strict=True)]


def measure_latency(url: str, recorder: Recorder) -> Latency:
    """One turn of ``STEPS`` steps, watched by SSE (which starts it) and by long-poll."""
    with httpx.Client(base_url=url, timeout=TIMEOUT) as http:
        path = "/agents/bench/messages/stream"
        with http.stream("POST", path, json={"message": "tick"}) as response:
            response.raise_for_status()
            frames = sse_frames(response)
            first, first_at = next(frames)
            session_id = first["sessionId"]
            polled: list[tuple[dict[str, Any], float]] = []
            poller = threading.Thread(
                target=lambda: polled.extend(
                    long_poll(httpx.Client(base_url=url, timeout=TIMEOUT), session_id)
                )
            )
            poller.start()
            streamed = [(first, first_at), *frames]
            poller.join(TIMEOUT)
    return Latency(
        sse=latencies(recorder, session_id, streamed),
        long_poll=latencies(recorder, session_id, polled),
    )


@dataclass(frozen=True)
class Reads:
    """Store reads of one watched, paused session per minute, per transport."""

    sse: float
    long_poll: float


def measure_reads(url: str, recorder: Recorder, window: float) -> Reads:
    """Two paused turns watched for ``window`` seconds: one by its SSE stream, one by long-poll."""
    with httpx.Client(base_url=url, timeout=TIMEOUT) as http:
        paused = http.post("/agents/bench/messages", json={"message": "hold"}).json()
        polled_id, polled_pending = paused["sessionId"], paused["id"]
        with http.stream(
            "POST", "/agents/bench/messages/stream", json={"message": "hold"}
        ) as stream:
            frames = sse_frames(stream)
            streamed_id = next(frames)[0]["sessionId"]
            streamed_pending = next(e for e, _ in frames if e["type"] == "approval:pending")["id"]
            start = time.perf_counter()
            end = start + window
            poller = threading.Thread(
                target=long_poll,
                args=(httpx.Client(base_url=url, timeout=TIMEOUT), polled_id),
                kwargs={"until": end},
            )
            poller.start()
            time.sleep(window)
            for pending in (streamed_pending, polled_pending):
                http.post(f"/approvals/{pending}/approve", json={}).raise_for_status()
            for event, _ in frames:
                if event["type"] == "done":
                    break
            poller.join(TIMEOUT)
    per_minute = 60.0 / window
    sse = recorder.reads_between((streamed_id, streamed_pending), start, end)
    polled = recorder.reads_between((polled_id, polled_pending), start, end)
    return Reads(sse=sse * per_minute, long_poll=polled * per_minute)


@contextmanager
def bench_stack(steps: int) -> Iterator[str]:
    """The local stack over the bench agent; its URL."""
    from signoff_dev.local.stack import LocalStack, StackSettings

    with tempfile.TemporaryDirectory() as tmp:
        console = io.StringIO()
        agents = write_agents(Path(tmp), steps)
        local = LocalStack(StackSettings(port=0, console=console, logs=console, agents=agents))
        local.start()
        try:
            yield local.url
        finally:
            local.stop()


@contextmanager
def no_wake_up() -> Iterator[None]:
    """Commits wake no waiting long-poll while inside: as on Lambda, where the turn
    runs in another sandbox than the status request that waits for it."""
    from signoff.store.signal import COMMITS

    committed = COMMITS.committed
    COMMITS.committed = lambda session_id: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        COMMITS.committed = committed  # type: ignore[method-assign]


def measure(steps: int = STEPS, window: float = WINDOW) -> tuple[Latency, list[float], Reads]:
    """The latencies as the local stack serves them, the long-poll's without the
    in-process wake-up, and the reads per waiting minute."""
    with recording() as recorder, bench_stack(steps) as url:
        # a first turn warms the functions (imports, clients): its figures are not kept
        measure_latency(url, recorder)
        local = measure_latency(url, recorder)
        with no_wake_up():
            polled = measure_latency(url, recorder).long_poll
        return local, polled, measure_reads(url, recorder, window)


def percentile(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--window", type=float, default=WINDOW)
    options = parser.parse_args()
    latency, polled, reads = measure(options.steps, options.window)
    for name, values, target in (
        ("SSE", latency.sse, 50),
        ("long-poll", latency.long_poll, 300),
        ("long-poll, no in-process wake-up (as deployed)", polled, 300),
    ):
        p50, p95 = percentile(values, 50), percentile(values, 95)
        print(
            f"{name}: commit to client p50 {p50:.1f} ms, p95 {p95:.1f} ms over {len(values)} events"
            f" (target p95 <= {target} ms)"
        )
    print(
        f"store reads per waiting minute: SSE {reads.sse:.0f}, long-poll {reads.long_poll:.0f}"
        f" (one paused session watched {options.window:.0f} s, scaled)"
    )


if __name__ == "__main__":
    main()
