"""The status route's long-poll: wait until a session's log grows, reading little.

A watcher asks ``?after=N&wait=S``. When nothing after ``N`` is committed yet and
the turn may still add events (``running`` or ``paused``), the route waits here:
a strongly consistent ``Query`` of the session's log from its next chunk on,
which finds nothing (one read unit) until a step commits a chunk. The pause
between reads doubles from ``FIRST_PAUSE`` to ``LONGEST_PAUSE`` while the turn
waits for a person (minutes or days: about one read a second), but only to
``RUNNING_PAUSE`` while it runs (its steps come seconds apart, and it ends
soon): an event committed by another process (on Lambda, the message
function's turn) is seen within one pause. tests/unit/api/test_long_poll.py counts
the reads; docs/clients.md states the figures. A commit made in this process (the
local stack runs every function in one) ends the pause at once (``signoff.store.signal``): one read
confirms it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from signoff.store.signal import COMMITS

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.clock import Clock
    from signoff.store.base import SessionLog
    from signoff.store.signal import Commits

__all__ = [
    "FIRST_PAUSE",
    "LONGEST_PAUSE",
    "MAX_WAIT",
    "RUNNING_PAUSE",
    "longest_pause",
    "wait_for_chunk",
]

# API Gateway's HTTP API answers 503 after 30 s: a wait ends well inside it.
MAX_WAIT: Final = 25
FIRST_PAUSE: Final = 0.05
LONGEST_PAUSE: Final = 1.0
RUNNING_PAUSE: Final = 0.2


def wait_for_chunk(
    sessions: SessionLog,
    session_id: str,
    from_seq: int,
    *,
    until: float,
    clock: Clock,
    sleep: Callable[[float], None] | None = None,
    commits: Commits = COMMITS,
    longest: float = LONGEST_PAUSE,
) -> int:
    """Wait until the log holds a chunk at ``from_seq`` or later, or ``until`` passes.

    ``until`` is a ``clock.monotonic()`` time; pauses grow to ``longest``. A pause
    is ``sleep`` when given (a test's clock), else a wait that this process's next
    commit to the session ends. Returns the number of log reads made.
    """
    reads = 0
    pause = FIRST_PAUSE
    with commits.watch(session_id) as committed:
        while True:
            left = until - clock.monotonic()
            if left <= 0:
                return reads
            if sleep is None:
                committed(min(pause, left))
            else:
                sleep(min(pause, left))
            pause = min(pause * 2, longest)
            reads += 1
            # Only the first chunk is wanted: the route reads what it answers with
            # once something is there.
            if next(iter(sessions.read_log(session_id, from_seq=from_seq)), None) is not None:
                return reads


def longest_pause(status: str) -> float:
    """How long a wait on a session in ``status`` pauses between reads, at most."""
    return RUNNING_PAUSE if status == "running" else LONGEST_PAUSE
