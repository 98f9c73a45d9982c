"""The status route's long-poll on the local stack: the wait outside the process-wide lock.

On AWS every request has its own sandbox, so a status request that waits (``?wait=S``,
``signoff.api.waiting``) holds up no other request. Here one process runs every
function and HTTP invocations are serialised (``signoff_dev.local.functions``): a
handler waiting inside that lock would hold up the very decision it waits for.
So the stack asks the handler without the wait, and when it would have waited
(nothing after ``after`` yet, the turn running or paused), waits with the same
``wait_for_chunk`` outside the lock and asks the handler again: the same
validation, auth and body, the same reads of the log.
"""

from __future__ import annotations

import copy
import json
import time
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlencode

from signoff.api.waiting import MAX_WAIT, longest_pause, wait_for_chunk

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.api.context import Api
    from signoff_dev.local.router import Route

__all__ = ["STATUS_ROUTE", "waiting_invoke"]

STATUS_ROUTE: Final = ("GET", "/agents/{name}/sessions/{id}")


def waiting_invoke(
    route: Route,
    event: dict[str, Any],
    invoke: Callable[[dict[str, Any]], Any],
    api: Callable[[], Api],
) -> Any:
    """``invoke(event)``, with a status request's wait done between two unwaiting calls."""
    query: dict[str, str] = dict(event.get("queryStringParameters") or {})
    wait = _valid_wait(query.get("wait")) if (route.method, route.path) == STATUS_ROUTE else None
    if not wait:
        return invoke(event)  # no wait, or one the handler refuses (its 400)
    started = time.monotonic()
    unwaited = _without_wait(event, query)
    result = invoke(unwaited)
    body = _body(result)
    if body is None or body["events"] or body["status"] not in ("running", "paused"):
        return result
    services = api()
    session_id = event["pathParameters"]["id"]
    record = services.sessions.load(session_id)
    if record is None:
        return result
    until = started + wait
    sessions, clock = services.sessions, services.clock
    longest = longest_pause(record.status)
    wait_for_chunk(sessions, session_id, record.next_seq, until=until, clock=clock, longest=longest)
    return invoke(unwaited)


def _valid_wait(value: str | None) -> float | None:
    try:
        wait = float(value) if value is not None else None
    except ValueError:
        return None
    return wait if wait is not None and 0 < wait <= MAX_WAIT else None


def _without_wait(event: dict[str, Any], query: dict[str, str]) -> dict[str, Any]:
    changed = copy.deepcopy(event)
    query = {name: value for name, value in query.items() if name != "wait"}
    changed["queryStringParameters"] = query or None
    changed["rawQueryString"] = urlencode(query)
    return changed


def _body(result: Any) -> dict[str, Any] | None:
    """A 200 status body, or None (an error answer goes back as it is)."""
    if not isinstance(result, dict) or result.get("statusCode") != 200:
        return None
    body = result.get("body")
    parsed = json.loads(body) if isinstance(body, str) else None
    return parsed if isinstance(parsed, dict) and "events" in parsed else None
