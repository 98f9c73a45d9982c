"""The channel a run is on, and the one rule of where its lifecycle is announced.

loopengine calls it ``ApproverChannel`` (its ``RunAgentOptions.channel``):
``cli`` (a terminal), ``http`` (a plain request; nobody holds a connection open)
and ``http_stream`` (an open SSE connection). signoff adds ``schedule`` for an
EventBridge run, which loopengine would run with no channel at all.

``onRunStart`` / ``onRunFinish`` never fire for ``cli`` / ``http_stream``: whoever
is attached there already sees the run start (``session``) and end (``done``) on
the stream. Every other run fires: ``http``, a scheduled run, and a caller that
names no channel. In signoff the rule governs the ``run_start`` / ``run_finish``
notifications (``signoff.durable.announce``) and ``hooks.py``'s ``on_run_start`` /
``on_run_finish`` alike, through ``announces``.

A run keeps its channel when it pauses (``TurnState.channel``): its resume,
whoever resolved the item and through whatever route (the API, a link, a chat
click, an expiry), counts as the channel the run started on, with
``trigger: resolution``. A stream's paused run is resumed into the same open
stream, so it announces nothing either.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["LIVE_CHANNELS", "RunChannel", "Trigger", "announces"]

RunChannel = Literal["cli", "http", "http_stream", "schedule"]
Trigger = Literal["message", "resolution"]

# The channels whose caller is attached to the run and sees its start and end.
LIVE_CHANNELS: Final[frozenset[str]] = frozenset({"cli", "http_stream"})


def announces(channel: RunChannel | None) -> bool:
    """Whether a run on ``channel`` gets its lifecycle announced (notifications and hooks)."""
    return channel not in LIVE_CHANNELS
