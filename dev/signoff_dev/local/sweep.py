"""``POST /_local/sweep``: one sweep now, on a clock a test moves ahead (local-only).

The template's schedule runs the sweeper function on the system's clock. This
route runs a sweeper of its own, built like the function's (``sweeper_from_env``:
the same table, queue and agents) but on a clock ``advance`` seconds ahead of the
last call's, so what waits hours — an escalation ladder's steps, an approval's
expiry, a ``stuck`` reminder — is due in a test's seconds. It runs every task
of the sweep's plan here, in turn (``Sweeper.sweep``), not through the sweep
queue, so it answers when the sweep is done, with what all of them did.
Everything the sweep writes is what the deployed sweep workers would write at
that time; the notifier and the API still run on the system's clock. The body
is ``{"advance": <seconds>}`` (optional, default 0; moving back is refused); the
answer is the sweep's report with the clock's total ``offset``. Like the sink's
routes it is local-only: the template has no such route, and no deployed
function reads the offset.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from signoff.api.body import JSON, read_body
from signoff.api.errors import error_payload
from signoff.errors import MalformedRequest, SignoffError
from signoff_dev.local.gateway import HttpRequest, HttpResponse

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.durable.sweeper import Sweeper

__all__ = ["SWEEP_PATH", "ShiftedClock", "sweep_routes"]

SWEEP_PATH: Final = "/_local/sweep"
# A re-driven or resumed turn gets as long as the deployed sweeper's would.
_BUDGET: Final = 60.0


class ShiftedClock:
    """The system's clock, ``offset`` seconds ahead for wall time (monotonic time is real)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self.offset)

    def monotonic(self) -> float:
        return time.monotonic()


def sweep_routes() -> dict[tuple[str, str], Callable[[HttpRequest], HttpResponse]]:
    """The sweep's local-only route, for the gateway; its sweeper is built on first use."""
    clock = ShiftedClock()
    built: list[Sweeper] = []
    # one sweep at a time: the offset and the sweeper are this route's alone
    lock = threading.Lock()

    def sweep(request: HttpRequest) -> HttpResponse:
        from signoff.aws.sweeper import sweeper_from_env

        try:
            advance = _advance(request)
            with lock:
                if not built:
                    built.append(sweeper_from_env(clock=clock))
                clock.offset += advance
                report = built[0].sweep(deadline=clock.monotonic() + _BUDGET)
                offset = clock.offset
        except SignoffError as exc:
            return HttpResponse.json(*error_payload(exc))
        return HttpResponse.json(200, {"offset": offset, **asdict(report)})

    return {("POST", SWEEP_PATH): sweep}


def _advance(request: HttpRequest) -> float:
    """The seconds a request moves the clock ahead.

    Raises:
        UnsupportedMediaType, MalformedRequest: the body is not strict, bounded JSON.
        MalformedRequest: it is not ``{"advance": <seconds, 0 or more>}``.
    """
    text = (
        read_body(request.body, request.header("content-type"), (JSON,)) if request.body else "{}"
    )
    body: Any = json.loads(text)
    if not isinstance(body, dict) or not set(body) <= {"advance"}:
        raise MalformedRequest('the body must be {"advance": <seconds>} or empty')
    advance = body.get("advance", 0)
    if (
        isinstance(advance, bool)
        or not isinstance(advance, int | float)
        or not math.isfinite(advance)
        or advance < 0
    ):
        raise MalformedRequest("advance must be a number of seconds, 0 or more")
    return float(advance)
