"""A GitHub REST API on loopback that keeps one issue's comments and lists them back.

``POST /repos/{repo}/issues/{n}/comments`` stores the comment and answers 201
with its ``id`` and ``html_url``; ``GET`` on the same path lists them oldest
first, filtered by ``since`` (ISO 8601) and paginated by ``per_page`` / ``page``
with a ``Link`` header, as GitHub does. ``fail_next`` makes the next posts fail,
transiently (HTTP 503) or for good (404). Every request is in
``server.requests`` for a test to check the exact calls.
"""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Self

from tests.support.http_server import Recorded, RecordingServer, Reply

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

__all__ = ["FakeGitHub"]

_ANSWERS = 200  # scripted answers: more than any test makes
_MARKER = re.compile(r"<!-- signoff:(\S+) -->")


class FakeGitHub:
    """One issue's comments: ``repo`` and ``issue`` as the channel under test names them."""

    def __init__(
        self, repo: str = "acme/payments", issue: int = 42, *, now: Callable[[], float] = time.time
    ) -> None:
        self.server = RecordingServer()
        self.path = f"/repos/{repo}/issues/{issue}/comments"
        self.comments: list[dict[str, Any]] = []
        self._failures: list[bool] = []
        self._lock = threading.Lock()
        self._now = now
        self.server.script([self._answer] * _ANSWERS, path=self.path)

    @property
    def url(self) -> str:
        return self.server.url

    def fail_next(self, times: int, *, retryable: bool) -> None:
        with self._lock:
            self._failures += [retryable] * times

    def markers(self) -> list[str]:
        """The keys of the hidden markers that start the posted comments, in order."""
        with self._lock:
            bodies = [c["body"] for c in self.comments]
        return [m.group(1) for b in bodies if (m := _MARKER.match(b))]

    def calls(self) -> list[tuple[str, str]]:
        """``(method, path)`` of every request, in order."""
        return [(r.method, r.path) for r in self.server.requests]

    def add(self, body: str, *, at: float | None = None) -> None:
        """A comment somebody else wrote, at ``at`` (epoch seconds; default now)."""
        with self._lock:
            self._store(body, self._now() if at is None else at)

    def _store(self, body: str, at: float) -> dict[str, Any]:
        number = len(self.comments) + 1
        stamp = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        comment = {
            "id": 1000 + number,
            "body": body,
            "created_at": stamp,
            "updated_at": stamp,
            "html_url": f"https://github.com/x/y/issues/1#issuecomment-{1000 + number}",
        }
        self.comments.append(comment)
        return comment

    def _answer(self, request: Recorded) -> Reply:
        if request.method == "POST":
            return self._post(request)
        return self._list(request)

    def _post(self, request: Recorded) -> Reply:
        with self._lock:
            if self._failures:
                if self._failures.pop(0):
                    return Reply(status=503, json={"message": "Service Unavailable"})
                return Reply(status=404, json={"message": "Not Found"})
            comment = self._store(request.json()["body"], self._now())
        return Reply(status=201, json=comment)

    def _list(self, request: Recorded) -> Reply:
        since = request.query.get("since", [""])[0]
        per_page = int(request.query.get("per_page", ["30"])[0])
        page = int(request.query.get("page", ["1"])[0])
        with self._lock:
            # ISO 8601 in UTC with a Z compares as text
            listed = [c for c in self.comments if not since or c["updated_at"] >= since]
        last = max(1, -(-len(listed) // per_page))
        headers = {}
        if last > 1:
            base = f"{self.url}{self.path}?per_page={per_page}&since={since}"
            headers["Link"] = f'<{base}&page={min(page + 1, last)}>; rel="next", ' + (
                f'<{base}&page={last}>; rel="last"'
            )
        return Reply(json=listed[(page - 1) * per_page : page * per_page], headers=headers)

    def __enter__(self) -> Self:
        self.server.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.stop()
