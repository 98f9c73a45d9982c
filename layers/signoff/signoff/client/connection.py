"""The client's connections to a signoff API, and the requests a turn makes, retried."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Self
from urllib.parse import quote

import httpx

from signoff.client.answers import error_for, taken
from signoff.errors import Unavailable

__all__ = ["POLL_WAIT", "Connection", "Transport"]

Transport = Literal["auto", "sse", "poll"]

# The status route waits at most 25 s (API Gateway's HTTP API gives up at 30 s).
POLL_WAIT: Final = 20.0


@dataclass
class Connection:
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

    def close(self) -> None:
        self.http.close()
        if self._streams is not None:
            self._streams.close()

    def __enter__(self) -> Self:
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
            if dropped and taken(response):
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
