"""``POST /agents/{name}/messages/stream``: the protocol's SSE transport, wherever it is served.

One implementation for every place the stream exists: the deployed stream
function (``signoff.api.stream_server`` behind the Lambda Web Adapter, a
function URL in ``RESPONSE_STREAM`` mode) and the local stack, which serves
this route beside the template's. API Gateway's HTTP API buffers a function's
answer, so the HTTP API itself has no stream (clients there long-poll
``statusUrl``). The route takes the body, tenant (the API key, then the
agent's ``tenant_for``), session and errors of ``POST /agents/{name}/messages``.

Each frame is ``event: <type>\\ndata: <json>\\n\\n``. ``session`` comes first,
then the engine's events as they happen. An ``ask`` is live on the open
stream: ``approval:pending`` (or ``question:pending``) arrives, the turn's
checkpoint is committed as on any transport, the person resolves it through
the approval route (or a notification's link), and the stream goes on with
the resumed turn's events, read from the session's log as each step is
committed, to ``done``. A turn that fails after the first frame ends with an
``error`` frame; a request refused before it (bad body, unknown agent, busy
session) gets the API's JSON error with its status. A comment line every
``heartbeat`` seconds keeps idle connections open and notices a client that
left; a client that leaves does not stop the turn, which is durable.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from signoff.errors import PayloadTooLarge, SignoffError, UsageError
from signoff.events import Done, ErrorEvent, SessionEvent, dump
from signoff.ids import new_id

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from signoff.api.context import Api
    from signoff.durable.results import TurnResult

__all__ = ["STREAM_PATH", "StreamAnswer", "TurnStream", "sse_frame"]

STREAM_PATH: Final = "/agents/{name}/messages/stream"
_HEARTBEAT: Final = b": keep-alive\n\n"
_HEADERS: Final = (
    ("content-type", "text/event-stream; charset=utf-8"),
    ("cache-control", "no-store"),
    ("x-accel-buffering", "no"),
)


def sse_frame(event: Mapping[str, Any]) -> bytes:
    """One event as an SSE frame: its type as the frame's name, the whole event as data."""
    data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    return f"event: {event['type']}\ndata: {data}\n\n".encode()


@dataclass(frozen=True)
class StreamAnswer:
    """What to send back: the frames as they are produced, or a JSON ``body``."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    frames: Iterator[bytes] | None = None

    @classmethod
    def refusal(cls, error: BaseException) -> StreamAnswer:
        """The API's status and ``{error, detail}`` for ``error``."""
        from signoff.api.errors import error_payload

        status, body = error_payload(error)
        return cls(status, (("content-type", "application/json"),), json.dumps(body).encode())


class TurnStream:
    """Serves the stream route for the ``Api`` that ``api`` returns when a request comes."""

    def __init__(
        self,
        api: Callable[[], Api],
        *,
        stopping: threading.Event,
        log: Callable[[str], None],
        poll_every: float = 0.2,
        heartbeat: float = 15.0,
        budget: float | None = None,
    ) -> None:
        """``budget``: seconds a request's turn may run before it yields and continues
        asynchronously (the stream function's timeout less a margin); None: no limit."""
        self._api = api
        self._budget = budget
        self._stopping = stopping
        self._log = log
        self._poll_every = poll_every
        self._heartbeat = heartbeat

    def serve(self, name: str, body: bytes, headers: Sequence[tuple[str, str]]) -> StreamAnswer:
        """Start the turn; the stream once it produced its first event, else the error."""
        try:
            api = self._api()
            agent, message, tenant, session_id = self._parse(api, name, body, headers)
        except Exception as error:
            return StreamAnswer.refusal(error)
        produced: queue.Queue[tuple[str, Any]] = queue.Queue()
        # Deployed, the invocation ends at the function's timeout: the turn yields
        # before it ("running") and a continuation takes it on, as on the HTTP API.
        deadline = None if self._budget is None else api.clock.monotonic() + self._budget

        def run() -> None:
            try:
                result = api.turns.send(
                    agent,
                    message,
                    tenant=tenant,
                    environment=api.environment,
                    session_id=session_id,
                    deadline=deadline,
                    on_event=lambda event: produced.put(("event", event)),
                    # The stream carries the run's start and end: no announcements.
                    channel="http_stream",
                )
            except Exception as error:
                produced.put(("error", error))
            else:
                produced.put(("result", result))

        threading.Thread(target=run, name=f"stream-{session_id}", daemon=True).start()
        first = produced.get()
        if first[0] == "error":  # refused before anything happened (busy, unknown session)
            return StreamAnswer.refusal(first[1])
        return StreamAnswer(200, _HEADERS, frames=self._frames(api, session_id, first, produced))

    def _parse(
        self, api: Api, name: str, body: bytes, headers: Sequence[tuple[str, str]]
    ) -> tuple[str, str, str, str]:
        """(agent, message, tenant, session id) of a request, as ``POST /messages`` reads them.

        Raises:
            PayloadTooLarge, MalformedRequest, UnsupportedMediaType, UsageError,
                Unauthorized, UnknownAgent: the API's 413, 400, 415, 400, 401 and 404.
        """
        from signoff.api.body import JSON, read_body
        from signoff.api.errors import validation_detail
        from signoff.api.models import MessageBody

        if len(body) > api.max_body_bytes:
            raise PayloadTooLarge(len(body), api.max_body_bytes)
        lowered = {key.lower(): value for key, value in headers}
        # The API's own body checks (415, 400), as for POST /messages.
        text = read_body(body, lowered.get("content-type", ""), (JSON,)) if body else "null"
        try:
            parsed = MessageBody.model_validate_json(text)
        except ValidationError as error:
            raise UsageError(validation_detail(error.errors())) from None
        # The key is checked before the agent is looked up, as on every route.
        tenant = api.tenant(lowered, name)
        agent = api.agents.get(name)
        return agent.name, parsed.message, tenant, api.session_of(agent, parsed, tenant) or new_id()

    def _frames(
        self,
        api: Api,
        session_id: str,
        first: tuple[str, Any],
        produced: queue.Queue[tuple[str, Any]],
    ) -> Iterator[bytes]:
        yield sse_frame(dump(SessionEvent(session_id=session_id)))
        emitted = 0
        held: list[dict[str, Any]] = []
        kind, value = first
        while kind == "event":
            if value["type"] in _PENDING:
                # The item exists once the pause is committed: a client that acts on the
                # event at once must find it, so it goes out when ``send`` has returned.
                held.append(value)
            else:
                yield from (sse_frame(event) for event in [*held, value])
                held.clear()
            emitted += 1
            kind, value = produced.get()
        if kind == "error":
            yield self._failed(session_id, value)
            return
        for event in held:
            yield sse_frame(event)
        result: TurnResult = value
        if result.status == "finished":
            yield sse_frame(dump(Done(text=result.text or "", stop_reason=result.stop_reason)))
            return
        if result.status == "running":  # past its deadline: it goes on as on AWS
            api.continuations.schedule(session_id)
        yield from self._follow(api, session_id, emitted)

    def _follow(self, api: Api, session_id: str, emitted: int) -> Iterator[bytes]:
        """The turn's further events from its log, as its checkpoints commit them, to ``done``.

        The first read skips the ``emitted`` events the stream already sent; later
        reads take only the chunks after the last one read.
        """
        record = api.sessions.load(session_id)
        from_seq = record.run_start_seq if record else 0
        skip = emitted
        quiet_since = time.monotonic()
        while not self._stopping.is_set():
            try:
                # The record first: a chunk is committed with its record, so every chunk
                # of a "done" record is readable by the time the log is read.
                record = api.sessions.load(session_id)
                if record is None:
                    raise SignoffError(f"session {session_id} is gone")
                chunks = list(api.sessions.read_log(session_id, from_seq=from_seq))
            except Exception as error:
                yield self._failed(session_id, error)
                return
            for chunk in chunks:
                for event in chunk.events[skip:]:
                    yield sse_frame(event)
                    quiet_since = time.monotonic()
                skip = max(0, skip - len(chunk.events))
                from_seq = chunk.seq + 1
            if record.status == "done":
                stop_reason = record.stop_reason if record.stop_reason in _STOP_REASONS else None
                yield sse_frame(dump(Done(text=record.text or "", stop_reason=stop_reason)))
                return
            if time.monotonic() - quiet_since >= self._heartbeat:
                yield _HEARTBEAT
                quiet_since = time.monotonic()
            self._stopping.wait(self._poll_every)

    def _failed(self, session_id: str, error: BaseException) -> bytes:
        from signoff.api.errors import error_payload

        _, body = error_payload(error)
        self._log(f"stream of session {session_id} failed: {type(error).__name__}: {error}")
        return sse_frame(dump(ErrorEvent(error=str(body["detail"]))))


_STOP_REASONS: Final = frozenset({"max_turns", "denied"})
_PENDING: Final = frozenset({"approval:pending", "question:pending"})
