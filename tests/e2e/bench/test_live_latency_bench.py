"""bench/live_latency.py's measurements on the local stack, on a short turn."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from tests.conftest import ROOT


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "live_latency", ROOT / "bench" / "live_latency.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["live_latency"] = module
    spec.loader.exec_module(module)
    return module


def test_each_committed_event_is_timed_to_its_arrival_and_watching_reads_are_counted() -> None:
    bench = _bench()
    # When the bench runs a 5-step turn and watches two paused turns for 2 s
    latency, polled, reads = bench.measure(steps=5, window=2.0)
    # Then every event committed was matched to its arrival on both transports, and on
    # the long-poll without the in-process wake-up (as deployed)
    # (5 ticks of tool:started and tool:result at least, and the answer)
    assert len(latency.sse) == len(latency.long_poll) == len(polled) >= 11
    # And long-poll saw no event before the store committed it: the hook times the commit
    assert min(latency.long_poll) >= 0 and min(polled) >= 0
    # And both watchers read the store while they waited
    assert reads.sse > 0 and reads.long_poll > 0
    # And the store's classes are their own again
    from signoff.store.pending import TablePendingItems
    from signoff.store.sessions import TableSessions

    assert TableSessions.commit.__qualname__ == "TableSessions.commit"
    assert TablePendingItems.get.__qualname__ == "TablePendingItems.get"
