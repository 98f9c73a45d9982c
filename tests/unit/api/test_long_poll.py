"""The status route's long-poll wait: how soon it sees a committed chunk, what it reads."""

from __future__ import annotations

import threading
from typing import Any

from signoff.api.waiting import (
    LONGEST_PAUSE,
    MAX_WAIT,
    RUNNING_PAUSE,
    longest_pause,
    wait_for_chunk,
)
from signoff.clock import ManualClock, SystemClock
from signoff.store.signal import Commits


class Log:
    """A session log that gets its next chunk at ``chunk_at``; counts the reads."""

    def __init__(self, clock: ManualClock | SystemClock, chunk_at: float | None) -> None:
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
    # Two waits of 25 s and one of 10 s, each asked again at once: docs/clients.md's figure.
    total = sum(waited(None, wait)[0] for wait in (MAX_WAIT, MAX_WAIT, 10))
    assert total == 72


def test_a_commit_in_this_process_ends_the_pause_at_once() -> None:
    # A chunk is committed 0.8 s into the wait: the pauses (0.05, 0.1, 0.2, 0.4, 0.8)
    # alone would read it at 1.55 s; the commit's signal has it read right away.
    clock = SystemClock()
    commits = Commits()
    log = Log(clock, chunk_at=None)

    def commit() -> None:
        log.chunk_at = 0.0
        commits.committed("s-1")

    committer = threading.Timer(0.8, commit)
    committer.start()
    start = clock.monotonic()
    reads = wait_for_chunk(
        log,  # type: ignore[arg-type]
        "s-1",
        7,
        until=start + MAX_WAIT,
        clock=clock,
        commits=commits,
    )
    committer.join()
    assert 0.8 <= clock.monotonic() - start < 1.4
    assert reads == len(log.reads) <= 5


def test_another_sessions_commit_does_not_end_the_pause() -> None:
    clock = SystemClock()
    commits = Commits()
    log = Log(clock, chunk_at=None)
    others = [threading.Timer(0.1 * i, commits.committed, args=("s-2",)) for i in range(1, 8)]
    for other in others:
        other.start()
    reads = wait_for_chunk(
        log,  # type: ignore[arg-type]
        "s-1",
        7,
        until=clock.monotonic() + 1.0,
        clock=clock,
        commits=commits,
    )
    for other in others:
        other.join()
    # the same reads as the pauses alone make in a second: 0.05, 0.1, 0.2, 0.4, then the rest
    assert reads == 5


def test_a_running_turns_watcher_reads_at_least_every_running_pause() -> None:
    # A step of a running turn lands 2.0 s into the wait; paused-turn pauses (to 1 s)
    # would read it at 2.55 s, a running turn's (to 0.2 s) within 0.2 s.
    clock = ManualClock()
    log = Log(clock, chunk_at=2.0)
    start = clock.monotonic()
    reads = wait_for_chunk(
        log,  # type: ignore[arg-type]
        "s-1",
        7,
        until=start + MAX_WAIT,
        clock=clock,
        sleep=clock.advance,
        longest=longest_pause("running"),
    )
    assert 2.0 <= clock.monotonic() - start <= 2.0 + RUNNING_PAUSE
    assert reads == len(log.reads) <= 2.2 / RUNNING_PAUSE + 3
    assert longest_pause("paused") == LONGEST_PAUSE > RUNNING_PAUSE
