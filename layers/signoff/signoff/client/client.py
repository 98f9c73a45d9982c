"""``Client``, what a caller starts from: a turn to run, or a session's events to read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from signoff.client.connection import Connection
from signoff.client.turn import Turn
from signoff.events import parse
from signoff.ids import new_id

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.events import LoopEvent

__all__ = ["Client", "SessionEvents"]


@dataclass
class SessionEvents:
    """A session's committed events, by their number in the session."""

    agent: str
    session_id: str
    _client: Connection

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
class Client(Connection):
    """A signoff API at ``base_url``; ``api_key`` goes as ``x-api-key``.

    ``stream_url``: where the SSE route is, when not at ``base_url`` (a deployed
    stack's stream function, its ``StreamUrl`` output). Its connections and
    requests (``decide``, ``status``, ``close``, a ``with`` block) are
    ``Connection``'s.
    """

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
