"""``signoff migrate``'s pace: at most ``--rate`` rewrites a second, spread evenly."""

from __future__ import annotations

import pytest

from signoff.errors import UsageError
from signoff_dev.cli.migrate import Pace


class Clock:
    """A monotonic clock that moves when slept on, or when told to."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_calls_are_spread_at_the_rate() -> None:
    clock = Clock()
    pace = Pace(4, clock=clock, sleep=clock.sleep)
    for _ in range(9):
        pace.wait()
    # the first goes at once, then one every quarter of a second: 9 calls in 2 s
    assert clock.slept == [0.25] * 8
    assert clock.now == 102.0


def test_time_spent_between_calls_counts_towards_the_interval() -> None:
    clock = Clock()
    pace = Pace(10, clock=clock, sleep=clock.sleep)
    pace.wait()
    clock.now += 0.04  # the rewrite itself took 40 ms
    pace.wait()
    clock.now += 0.5  # a slow read of the next page: no burst after it
    pace.wait()
    pace.wait()
    assert clock.slept == pytest.approx([0.06, 0.1])


@pytest.mark.parametrize("rate", [0, -1, float("nan")])
def test_a_rate_that_is_no_positive_number_is_refused(rate: float) -> None:
    with pytest.raises(UsageError, match="--rate"):
        Pace(rate)
