"""A turn of an agent, followed over SSE or the status route, and what it waits on."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import quote

import httpx

from signoff.client.answers import error_for, no_route
from signoff.client.wire import Posting, sse_events
from signoff.errors import BadInput, Unavailable
from signoff.events import (
    ApprovalPending,
    Done,
    ErrorEvent,
    QuestionPending,
    SessionEvent,
    parse,
)

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from signoff.client.connection import Connection, Transport
    from signoff.events import LoopEvent

__all__ = ["Pending", "StopReason", "Turn"]

# Why a turn stopped, as the API's bodies say it: ``done``'s max_turns / denied, or
# (the 202 and the status route of a paused session) pending_approval / pending_question.
StopReason = Literal["max_turns", "denied", "pending_approval", "pending_question"]

# How often a watcher asks while the message has not reached the session yet.
_SETTLE: Final = 0.05


@dataclass
class Pending:
    """An approval or a question the turn waits on; deciding it continues the turn."""

    event: ApprovalPending | QuestionPending
    _client: Connection

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
    _client: Connection
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
                    if self._transport == "auto" and no_route(response):
                        client.transport = "poll"
                        return False
                    raise error_for(response)
                for event in sse_events(response.iter_lines()):
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
        posting = Posting(self._client, f"/agents/{quote(self.agent)}/messages", body)
        yield from self._follow(posting)

    def _follow(self, posting: Posting | None = None) -> Iterator[LoopEvent]:
        """The turn's events after the last one seen, from the status route, to its end.

        Raises:
            Unavailable: the message never reached the server (its connection was lost).
            SignoffError: the plain route's error, when the message was refused.
        """
        while self.done is None and self.error is None:
            sending = posting is not None and posting.running()
            starting = self._seen == 0
            status = self._ask(starting=starting, sending=sending)
            new = status["events"] if status is not None else []
            if starting and not new:
                self._before_first(posting, status, sending=sending)
                continue
            assert status is not None
            yield from self._take_new(new)
            if self.error is None:
                yield from self._at_end(posting, status)

    def _ask(self, *, starting: bool, sending: bool) -> Any:
        """The status route's body from the next event on (None: no such session yet)."""
        client = self._client
        return client.status(
            self.agent,
            self.session_id,
            after=self._base + self._seen,
            # Short while the message may yet be refused: the refusal is the answer.
            wait=min(client.wait, 2.0) if starting and sending else client.wait,
            missing=None if starting else "raise",
        )

    def _before_first(
        self, posting: Posting | None, status: dict[str, Any] | None, *, sending: bool
    ) -> None:
        """No event of the turn yet: wait on, follow the session it moved to, or say why
        none will come.

        Raises:
            Unavailable: the message never reached the server.
            SignoffError: the plain route's error, when the message was refused.
        """
        state = status["status"] if status is not None else None
        if sending:
            if state != "running":  # nothing to wait on yet: the route answered at once
                time.sleep(_SETTLE)
            return
        if posting is not None:
            if (refused := posting.refusal()) is not None:
                raise refused
            if self._moved(posting, status):
                return
        if state != "running":
            raise Unavailable(f"{self._client.base_url}: the message was lost on its way")

    def _take_new(self, new: list[dict[str, Any]]) -> Iterator[LoopEvent]:
        """The session event (once a turn), then the status route's new events, up to
        an error."""
        yield from self._take(SessionEvent(session_id=self.session_id))
        for event in new:
            yield from self._take(parse(event))
            if self.error is not None:
                return

    def _at_end(self, posting: Posting | None, status: dict[str, Any]) -> Iterator[LoopEvent]:
        """``done`` when every event is seen and the session is done.

        Raises:
            Unavailable: every event is seen, and the session went idle with no answer.
        """
        if status["next"] != self._base + self._seen:
            return
        if status["status"] == "done":
            yield from self._take(
                Done(text=status.get("text") or "", stop_reason=status.get("stopReason"))
            )
        elif status["status"] == "idle" and not (posting and posting.running()):
            raise Unavailable(f"session {self.session_id}: the turn ended without an answer")

    def _moved(self, posting: Posting, status: dict[str, Any] | None) -> bool:
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
