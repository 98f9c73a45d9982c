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
an import-linter contract in pyproject.toml keeps it so. Its modules: ``client``
(``Client``, what a caller starts from), ``turn`` (a turn and what it waits on),
``connection`` (the requests, retried), ``wire`` (SSE lines, the background post),
``answers`` (an error answer's exception).
"""

from __future__ import annotations

from signoff.client.answers import error_for
from signoff.client.client import Client, SessionEvents
from signoff.client.connection import Transport
from signoff.client.turn import Pending, StopReason, Turn

__all__ = ["Client", "Pending", "SessionEvents", "StopReason", "Transport", "Turn", "error_for"]
