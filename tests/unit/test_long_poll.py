"""The status route's long-poll wait: how soon it sees a committed chunk, what it reads."""

from __future__ import annotations

from typing import Any

from signoff.api.waiting import MAX_WAIT, wait_for_chunk
from signoff.clock import ManualClock


class Log:
    """A session log that gets its next chunk at ``chunk_at``; counts the reads."""

    def __init__(self, clock: ManualClock, chunk_at: float | None) -> None:
        self.clock = clock
        self.start = clock.monotonic()
        self.chunk_at = chunk_at
        self.reads: list[tuple[str, int]] = []

    def read_log(self, session_id: str, *, from_seq: int = 0) -> Any:
        self.reads.append((session_id, from_seq))
        arrived = self.chunk_at is not None and self.clock.monotonic() - self.start >= self.chunk_at
        return iter([object()] if arrived else [])


def waited(chunk_at: float | None, wait: float) -> tuple[int, float, Log]:
    clock = ManualClock()
    log = Log(clock, chunk_at)
    start = clock.monotonic()
    reads = wait_for_chunk(
        log,  # type: ignore[arg-type]
        "s-1",
        7,
        until=start + wait,
        clock=clock,
        sleep=clock.advance,
    )
    return reads, clock.monotonic() - start, log


def test_a_chunk_committed_during_the_wait_ends_it_within_a_fraction_of_a_second() -> None:
    for chunk_at in (0.01, 0.3, 2.0, 17.5):
        reads, elapsed, log = waited(chunk_at, MAX_WAIT)
        assert chunk_at <= elapsed <= chunk_at + 1.0
        assert reads == len(log.reads)
        # the log is read after N's chunks only, never the whole session again
        assert set(log.reads) == {("s-1", 7)}


def test_a_wait_with_nothing_committed_ends_at_its_limit() -> None:
    reads, elapsed, _ = waited(None, 3.0)
    assert elapsed == 3.0
    assert reads < 3.0 / 0.05


def test_a_watcher_minute_costs_about_one_read_a_second() -> None:
    # Two waits of 25 s and one of 10 s, each asked again at once: the README's figure.
    total = sum(waited(None, wait)[0] for wait in (MAX_WAIT, MAX_WAIT, 10))
    assert total == 72
