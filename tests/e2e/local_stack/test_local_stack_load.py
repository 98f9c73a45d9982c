"""The local stack under concurrent load: the bench's workload, smaller (30 sessions, 6 clients).

``bench/local_stack_load.py`` runs the same ``signoff_dev.local.load.run_load``
with 200 sessions and 20 clients and prints the throughput.
"""

from __future__ import annotations

import io

from signoff_dev.local.load import run_load
from signoff_dev.local.stack import LocalStack, StackSettings

SESSIONS, CLIENTS = 30, 6


def test_concurrent_sessions_all_finish_notified_once_and_resolved_once() -> None:
    console = io.StringIO()
    with LocalStack(
        StackSettings(port=0, environment="production", console=console, logs=console)
    ) as stack:
        report = run_load(stack, sessions=SESSIONS, clients=CLIENTS, timeout=120.0)

    assert report.failures == [], "\n".join(report.lines())
    assert report.done == SESSIONS
    assert report.via_page == SESSIONS // 2 and report.via_api == SESSIONS - SESSIONS // 2
    assert report.pending_items == SESSIONS
    # one row per (item, channel), each sent, and the sink got each exactly once
    assert report.outbox_rows >= SESSIONS and report.rows_sent == report.outbox_rows
    assert report.delivered_once == report.outbox_rows
    assert report.duplicates == 0 and report.undelivered == 0
    assert report.deliveries == report.outbox_rows
    # no item resolved twice
    assert report.approved_once == SESSIONS and report.resolved_twice == 0
    assert report.status_approved == SESSIONS
    assert report.throughput > 0
