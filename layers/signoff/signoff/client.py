"""A small synchronous client of a signoff API, over whichever transport it offers.

::

    from signoff.client import Client

    client = Client("http://127.0.0.1:3000", api_key="sk_…")
    turn = client.send("customer-service", "refund order A-1001")
    for event in turn:                      # the protocol's LoopEvent models
        if turn.pending is not None:        # approval:pending / question:pending
            turn.pending.approve()          # or .deny("why"), .answer("text")
    print(turn.done.text if turn.done else turn.error)
    print(turn.stop_reason)                 # None, max_turns, denied, pending_approval, …

A turn yields what the streamed transports carry: ``session`` first, the
engine's events, then one ``done`` (or one ``error`` when the turn failed after
it started). Two transports carry it:

- **SSE** (``POST /agents/{name}/messages/stream``): the local stack serves it
  at its base URL; a deployed HTTP API does not, the optional stream function
  does at a URL of its own (the stack's ``StreamUrl`` output): give it as
  ``stream_url`` and the turns stream from there, everything else still going
  to ``base_url``.
- **long-poll**: ``POST /agents/{name}/messages`` in the background while the
  status route ``GET /agents/{name}/sessions/{id}?after=N&wait=S`` yields each
  step's events as it is committed, until the turn is done. The client names
  the session (``sessionId``), so it can follow it before the POST answers.

``transport="auto"`` (the default) tries SSE and falls back to long-poll when the
server has no stream route (its 404 names no route, not an agent) or when a
separate ``stream_url`` cannot be connected to (nothing was sent there),
remembering that; ``"sse"`` or ``"poll"`` force one. A connection that drops mid-turn is
resumed on the status route from the last event seen: the status route numbers a
session's events, so the turn's ``N``-th event is never yielded twice or skipped.

An error answer becomes the project's exception (``signoff.errors``) by its HTTP
status: 400 ``BadInput``, 401 ``Unauthorized``, 403 ``Forbidden``, 404 ``Absent``,
409 ``Conflict``, 410 ``Gone``, 5xx ``Unavailable`` (the API's ``detail`` as the
message); a server that stays unreachable is ``Unavailable`` too.

Imports nothing of the engine (httpx, pydantic and the protocol's models only):
an import-linter contract in pyproject.toml keeps it so.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import quote

import httpx

from signoff.errors import (
    Absent,
    BadInput,
    Conflict,
    Forbidden,
    Gone,
    SignoffError,
    Unauthorized,
    Unavailable,
)
from signoff.events import (
    ApprovalPending,
    Done,
    ErrorEvent,
    QuestionPending,
    SessionEvent,
    parse,
)
from signoff.ids import new_id

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from signoff.events import LoopEvent

__all__ = ["Client", "Pending", "SessionEvents", "StopReason", "Transport", "Turn", "error_for"]

Transport = Literal["auto", "sse", "poll"]
# Why a turn stopped, as the API's bodies say it: ``done``'s max_turns / denied, or
# (the 202 and the status route of a paused session) pending_approval / pending_question.
StopReason = Literal["max_turns", "denied", "pending_approval", "pending_question"]

# The status route waits at most 25 s (API Gateway's HTTP API gives up at 30 s).
POLL_WAIT: Final = 20.0
# How often a watcher asks while the message has not reached the session yet.
_SETTLE: Final = 0.05
_FAMILIES: Final[dict[int, type[SignoffError]]] = {
    400: BadInput,
    401: Unauthorized,
    403: Forbidden,
    404: Absent,
    409: Conflict,
    410: Gone,
}


def error_for(response: httpx.Response) -> SignoffError:
    """The exception an error answer stands for (its family, by status; ``detail`` says why)."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    detail = str(body.get("detail") or body.get("message") or response.reason_phrase)
    code = body.get("error")
    text = f"{code}: {detail}" if code else detail
    family = _FAMILIES.get(response.status_code)
    if family is None:
        family = Unavailable if response.status_code >= 500 else BadInput
    return family(f"{text} (HTTP {response.status_code})")


def _code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return str(body.get("error")) if isinstance(body, dict) else None


def _taken(response: httpx.Response) -> bool:
    """Whether a decision sent again was answered "the first sending was taken".

    ``already_resolved``: the item is decided (the first sending decided it, or a
    later vote did). ``already_voted`` with ``resent``: the vote on record is this
    very one (the same actor, channel and decision), short of the item's quorum.
    Any other ``already_voted`` is a vote cast elsewhere: an error.
    """
    if response.status_code != 409:
        return False
    code = _code(response)
    if code == "already_resolved":
        return True
    return code == "already_voted" and response.json().get("resent") is True


def _no_route(response: httpx.Response) -> bool:
    """A 404 for a route the server does not have (not an unknown agent or session)."""
    if response.status_code not in (404, 405):
        return False
    try:
        body = response.json()
    except ValueError:
        return True
    detail = str(body.get("detail", "")) if isinstance(body, dict) else ""
    # API Gateway's own 404 ({"message": "Not Found"}) or the API's catch-all route.
    return response.status_code == 405 or not detail or detail.startswith("no route ")


@dataclass
class Pending:
    """An approval or a question the turn waits on; deciding it continues the turn."""

    event: ApprovalPending | QuestionPending
    _client: Client

    @property
    def id(self) -> str:
        return self.event.id

    @property
    def stop_reason(self) -> Literal["pending_approval", "pending_question"]:
        """What the turn stopped with while it waits here, as the API's 202 says it."""
        if isinstance(self.event, QuestionPending):
            return "pending_question"
        return "pending_approval"

    def approve(self, note: str | None = None, args: dict[str, Any] | None = None) -> None:
        """Approve the call (with changed ``args`` if the tool allows it)."""
        body = {key: value for key, value in (("note", note), ("args", args)) if value is not None}
        self._client.decide(f"/approvals/{quote(self.id)}/approve", body)

    def deny(self, reason: str | None = None) -> None:
        self._client.decide(
            f"/approvals/{quote(self.id)}/deny", {"reason": reason} if reason else {}
        )

    def answer(self, text: str) -> None:
        self._client.decide(f"/questions/{quote(self.id)}/answer", {"answer": text})


@dataclass
class Turn:
    """One message's turn: iterate it for its events, once."""

    agent: str
    message: str
    session_id: str
    _client: Client
    _transport: Transport
    pending: Pending | None = None
    done: Done | None = None
    error: str | None = None
    # The session's events before this turn, and this turn's seen so far: the
    # status route's number of the next one is their sum.
    _base: int = 0
    _seen: int = 0
    _announced: bool = field(default=False, repr=False)
    _started: bool = field(default=False, repr=False)

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the turn stopped: ``done``'s ``max_turns`` / ``denied`` (None for an answer,
        or while it runs), or ``pending_approval`` / ``pending_question`` while it waits on
        a person (``pending``) — what the 202 body and the status route say."""
        if self.done is not None:
            return self.done.stop_reason
        if self.pending is not None and self.error is None:
            return self.pending.stop_reason
        return None

    def __iter__(self) -> Iterator[LoopEvent]:
        if self._started:
            raise BadInput("a turn is iterated once")
        self._started = True
        self._base = self._client.session_next(self.agent, self.session_id)
        if self._transport != "poll":
            streamed = yield from self._sse()
            if streamed:
                return
        yield from self._poll()

    # -- SSE ------------------------------------------------------------------------------

    def _sse(self) -> Generator[LoopEvent, None, bool]:
        """The turn over SSE; False when the server has no stream (auto falls back)."""
        client = self._client
        body = {"message": self.message, "sessionId": self.session_id}
        path = f"/agents/{quote(self.agent)}/messages/stream"
        try:
            with client.streams.stream("POST", path, json=body, headers=client.headers) as response:
                if response.status_code != 200:
                    response.read()
                    if self._transport == "auto" and _no_route(response):
                        client.transport = "poll"
                        return False
                    raise error_for(response)
                for event in _sse_events(response.iter_lines()):
                    yield from self._take(event)
                    if self.done is not None or self.error is not None:
                        return True
        except httpx.ConnectError:
            if self._transport == "auto" and client.stream_url is not None and not self._seen:
                # a stream function that is not there (not deployed, or down): the
                # message never left, so the plain route takes it
                client.transport = "poll"
                return False
            # the API itself is unreachable: the status route retries, then says so
        except httpx.TransportError:
            pass  # dropped: the status route has every event from the last one seen on
        yield from self._follow()
        return True

    # -- long-poll ------------------------------------------------------------------------

    def _poll(self) -> Iterator[LoopEvent]:
        """The message posted in the background; its events followed on the status route.

        The plain route answers when the turn finished or paused; the status route's
        long-poll has each step's events as it is committed, so they are yielded live.
        """
        body = {"message": self.message, "sessionId": self.session_id}
        posting = _Posting(self._client, f"/agents/{quote(self.agent)}/messages", body)
        yield from self._follow(posting)

    def _follow(self, posting: _Posting | None = None) -> Iterator[LoopEvent]:
        """The turn's events after the last one seen, from the status route, to its end.

        Raises:
            Unavailable: the message never reached the server (its connection was lost).
            SignoffError: the plain route's error, when the message was refused.
        """
        client = self._client
        while self.done is None and self.error is None:
            sending = posting is not None and posting.running()
            starting = self._seen == 0
            status = client.status(
                self.agent,
                self.session_id,
                after=self._base + self._seen,
                # Short while the message may yet be refused: the refusal is the answer.
                wait=min(client.wait, 2.0) if starting and sending else client.wait,
                missing=None if starting else "raise",
            )
            new = status["events"] if status is not None else []
            if starting and not new:
                state = status["status"] if status is not None else None
                if sending:
                    if state != "running":  # nothing to wait on yet: the route answered at once
                        time.sleep(_SETTLE)
                    continue
                if posting is not None and (refused := posting.refusal()) is not None:
                    raise refused
                if posting is not None and self._moved(posting, status):
                    continue
                if state != "running":
                    raise Unavailable(f"{client.base_url}: the message was lost on its way")
                continue
            assert status is not None
            yield from self._take(SessionEvent(session_id=self.session_id))
            for event in new:
                yield from self._take(parse(event))
                if self.error is not None:
                    return
            caught_up = status["next"] == self._base + self._seen
            if caught_up and status["status"] == "done":
                done = Done(text=status.get("text") or "", stop_reason=status.get("stopReason"))
                yield from self._take(done)
            elif caught_up and status["status"] == "idle" and not (posting and posting.running()):
                raise Unavailable(f"session {self.session_id}: the turn ended without an answer")

    def _moved(self, posting: _Posting, status: dict[str, Any] | None) -> bool:
        """The server put the message in another session (an agent's ``session_id_for``).

        Its events are then followed there, from the number of the answer's first.
        """
        answer = posting.answer()
        if answer is None or answer.get("sessionId") in (None, self.session_id):
            return False
        self.session_id = answer["sessionId"]
        now = self._client.status(self.agent, self.session_id, after=0, skip_events=True)
        self._base = int(now["next"]) - len(answer.get("events", []))
        return True

    # -- every event goes through here ----------------------------------------------------

    def _take(self, event: LoopEvent) -> Iterator[LoopEvent]:
        if isinstance(event, SessionEvent):
            if self._announced:
                return  # one session event per turn, whichever transport said it
            self._announced = True
            self.session_id = event.session_id
        elif isinstance(event, Done):
            self.done, self.pending = event, None
        else:
            # An event of the session's log (an error of a failed turn is logged too).
            self._seen += 1
            if isinstance(event, ErrorEvent):
                self.error, self.pending = event.error, None
            elif isinstance(event, ApprovalPending | QuestionPending):
                self.pending = Pending(event, self._client)
            else:
                self.pending = None  # the turn went on: it was decided
        yield event


@dataclass
class SessionEvents:
    """A session's committed events, by their number in the session."""

    agent: str
    session_id: str
    _client: Client

    def events(self, after: int = 0, *, follow: bool = False) -> Iterator[LoopEvent]:
        """The events after the ``after``-th; with ``follow``, on until the turn stops."""
        while True:
            wait = self._client.wait if follow else 0.0
            status = self._client.status(self.agent, self.session_id, after=after, wait=wait)
            for event in status["events"]:
                yield parse(event)
            after = status["next"]
            if not follow or status["status"] not in ("running", "paused"):
                return


@dataclass
class Client:
    """A signoff API at ``base_url``; ``api_key`` goes as ``x-api-key``.

    ``stream_url``: where the SSE route is, when not at ``base_url`` (a deployed
    stack's stream function, its ``StreamUrl`` output).
    """

    base_url: str
    api_key: str | None = None
    stream_url: str | None = None
    transport: Transport = "auto"
    timeout: float = 60.0
    wait: float = POLL_WAIT
    retries: int = 5
    http: httpx.Client = field(init=False)
    _streams: httpx.Client | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        # The status route's wait plus room: a long-poll is not a timeout.
        timeout = httpx.Timeout(max(self.timeout, self.wait + 10))
        self.http = httpx.Client(base_url=self.base_url, timeout=timeout)
        if self.stream_url is not None:
            self._streams = httpx.Client(base_url=self.stream_url, timeout=timeout)

    @property
    def streams(self) -> httpx.Client:
        """The SSE route's server: ``stream_url``'s, else ``http`` itself."""
        return self._streams if self._streams is not None else self.http

    @property
    def headers(self) -> dict[str, str]:
        return {"x-api-key": self.api_key} if self.api_key else {}

    def send(self, agent: str, message: str, session: str | None = None) -> Turn:
        """A new turn of ``agent`` (continuing ``session`` if given); iterate it to run it."""
        return Turn(
            agent=agent,
            message=message,
            # Chosen here, so a connection dropped before the first event can resume.
            session_id=session or new_id(),
            _client=self,
            _transport=self.transport,
        )

    def session(self, id: str, *, agent: str) -> SessionEvents:
        return SessionEvents(agent=agent, session_id=id, _client=self)

    def close(self) -> None:
        self.http.close()
        if self._streams is not None:
            self._streams.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- requests -------------------------------------------------------------------------

    def decide(self, path: str, body: dict[str, Any]) -> None:
        """Send a decision or an answer; one whose answer was lost is sent again.

        The second sending is answered 409 when the first was taken:
        ``already_resolved`` (the item is decided either way, and the turn goes on),
        or ``already_voted`` with ``resent`` (the first sending's vote is on record,
        and the item waits for the other approvers' votes).

        Raises:
            Unavailable: the server stayed unreachable for ``retries`` attempts.
        """
        dropped = False
        for _ in range(self.retries):
            try:
                response = self.http.post(path, json=body, headers=self.headers)
            except httpx.TransportError:
                dropped = True
                time.sleep(0.1)
                continue
            if dropped and _taken(response):
                return
            if response.status_code >= 400:
                raise error_for(response)
            return
        raise Unavailable(f"{self.base_url} is unreachable")

    def session_next(self, agent: str, session_id: str) -> int:
        """How many events the session holds (0 for a new one)."""
        status = self.status(agent, session_id, after=0, missing=None, skip_events=True)
        return 0 if status is None else int(status["next"])

    def status(
        self,
        agent: str,
        session_id: str,
        *,
        after: int,
        wait: float = 0.0,
        missing: Literal["raise"] | None = "raise",
        skip_events: bool = False,
    ) -> Any:
        """The status route's body; a dropped request is asked again, backing off.

        Raises:
            Unavailable: the server stayed unreachable for ``retries`` attempts.
        """
        path = f"/agents/{quote(agent)}/sessions/{quote(session_id)}"
        params: dict[str, Any] = {"after": after}
        if wait:
            params["wait"] = wait
        if skip_events:
            params["after"] = 2**31  # only the count (``next``) is wanted
        pause = 0.1
        for attempt in range(self.retries):
            try:
                response = self.http.get(path, params=params, headers=self.headers)
            except httpx.TransportError as dropped:
                if attempt == self.retries - 1:
                    raise Unavailable(f"{self.base_url} is unreachable: {dropped}") from None
                time.sleep(pause)
                pause = min(pause * 2, 2.0)
                continue
            if response.status_code == 404 and missing is None:
                return None
            if response.status_code >= 400:
                raise error_for(response)
            return response.json()
        raise Unavailable(f"{self.base_url} is unreachable")


class _Posting:
    """``POST path`` on a thread of its own: its answer, or that its connection dropped."""

    def __init__(self, client: Client, path: str, body: dict[str, Any]) -> None:
        self._response: httpx.Response | None = None
        self._thread = threading.Thread(target=self._post, args=(client, path, body), daemon=True)
        self._thread.start()

    def _post(self, client: Client, path: str, body: dict[str, Any]) -> None:
        # A dropped connection leaves no answer: the turn goes on on the server, and
        # the status route tells it.
        with contextlib.suppress(httpx.TransportError):
            self._response = client.http.post(path, json=body, headers=client.headers)

    def running(self) -> bool:
        return self._thread.is_alive()

    def refusal(self) -> SignoffError | None:
        """The error the message was answered with, if any."""
        response = self._response
        return error_for(response) if response is not None and response.is_error else None

    def answer(self) -> dict[str, Any] | None:
        response = self._response
        if response is None or response.is_error:
            return None
        body: dict[str, Any] = response.json()
        return body


def _sse_events(lines: Iterator[str]) -> Iterator[LoopEvent]:
    """The events of an SSE stream's lines (comments skipped, ``data:`` lines joined)."""
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield parse(json.loads("\n".join(data)))
            data = []
