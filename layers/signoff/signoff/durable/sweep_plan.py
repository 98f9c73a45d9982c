"""One sweep's tasks as the sweep queue carries them: plain data, nothing of the store.

The sweeper function only plans (every minute, onto the sweep queue); the sweep
workers run the tasks (``signoff.durable.sweeper``). Planning needs the shard
count and nothing else, so the scheduled function imports this module, not the
sweep's machinery.
"""

from __future__ import annotations

from typing import Any, Final, Literal

__all__ = ["JOBS", "Job", "task_bodies"]

Job = Literal["send", "retry", "due", "stalled", "legacy"]
# The jobs read per shard, in the order a sweep run in one place runs them.
JOBS: Final[tuple[Job, ...]] = ("send", "retry", "due", "stalled")


def task_bodies(shards: int, *, legacy: bool) -> list[dict[str, Any]]:
    """Every task of one sweep as its message, ``{"job": …, "shard": …}`` (what
    ``signoff.durable.sweeper.SweepTask`` reads): the legacy keys' move first (if
    ``legacy``), then each job on each of ``shards`` shards."""
    moved: list[dict[str, Any]] = [{"job": "legacy", "shard": 0}] if legacy else []
    return moved + [{"job": job, "shard": shard} for job in JOBS for shard in range(shards)]
