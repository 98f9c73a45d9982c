"""``signoff outbox list | retry`` as an operator runs it: a subprocess against a moto server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import boto3

from signoff.channels.notification import Notification
from signoff.channels.subject import Subject
from signoff.notify import lifecycle
from signoff.store.dynamodb import DynamoStore
from tests.conftest import ROOT
from tests.support.aws import moto_server as moto_server

SUBJECT = "stuck:p1:1"


def signoff(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "signoff_dev.cli.main", "outbox", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def failed_rows(store: DynamoStore) -> None:
    """A reminder on three channels: webhook failed for good, slack retrying, email sent."""
    now = time.time()
    note = Notification(
        kind="stuck",
        agent="refunds",
        run_id="run-1",
        title="Still waiting",
        body="",
        session_id="s1",
    )
    rows = lifecycle.rows(
        Subject.parse(SUBJECT),
        note,
        ["email", "slack", "webhook"],
        now=now - 600,
        retain_until=now + 3600,
    )
    assert store.outbox.add(rows)
    for channel in ("email", "slack", "webhook"):
        assert store.outbox.claim(SUBJECT, channel, owner="n", until=now + 30, now=now)
    store.outbox.mark_sent(SUBJECT, "email", at=now)
    store.outbox.mark_failed(SUBJECT, "webhook", reason="404 Not Found:\n  no such hook")
    store.outbox.mark_failed(SUBJECT, "slack", reason="invalid_auth", retry_at=now + 300)


def queued(env: dict[str, str]) -> list[dict[str, str]]:
    sqs = boto3.client("sqs")
    got = sqs.receive_message(QueueUrl=env["SIGNOFF_NOTIFY_QUEUE_URL"], MaxNumberOfMessages=10)
    return [json.loads(m["Body"]) for m in got.get("Messages", [])]


def test_list_shows_each_row_with_its_channel_kind_attempts_status_and_reason(
    moto_server: dict[str, str],
) -> None:
    failed_rows(DynamoStore.from_env())

    every = signoff("list", "--pending-id", SUBJECT, env=moto_server)
    attention = signoff("list", env=moto_server)
    failed = signoff("list", "--failed", env=moto_server)

    assert every.returncode == 0, every.stderr
    header, *lines = every.stdout.splitlines()
    assert header.split("\t") == ["subject", "channel", "kind", "attempts", "status", "reason"]
    cells = {line.split("\t")[1]: line.split("\t") for line in lines}
    assert cells["email"][2:4] == ["stuck", "1"] and cells["email"][4].startswith("sent ")
    assert cells["slack"][4].startswith("retry ") and cells["slack"][4].endswith("(failure 1)")
    assert cells["slack"][5] == "invalid_auth"
    assert cells["webhook"][4:] == ["failed (failure 1)", "404 Not Found: no such hook"]
    # without a subject: what needs attention (not the sent row); --failed: failed for good
    assert sorted(line.split("\t")[1] for line in attention.stdout.splitlines()[1:]) == [
        "slack",
        "webhook",
    ]
    assert [line.split("\t")[:2] for line in failed.stdout.splitlines()[1:]] == [
        [SUBJECT, "webhook"]
    ]


def test_retry_makes_failed_rows_sendable_and_enqueues_their_subject_once(
    moto_server: dict[str, str],
) -> None:
    store = DynamoStore.from_env()
    failed_rows(store)

    done = signoff("retry", SUBJECT, env=moto_server)

    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == [
        f"{SUBJECT}\tslack\tre-driven",
        f"{SUBJECT}\twebhook\tre-driven",
    ]
    rows = {row.channel: row for row in store.outbox.rows(SUBJECT)}
    assert [rows[c].failed for c in ("slack", "webhook")] == [False, False]
    assert rows["email"].notified_at is not None  # a sent row is left as it was
    # the notifier claims them again, with the key they always had
    now = time.time()
    again = store.outbox.claim(SUBJECT, "webhook", owner="m", until=now + 30, now=now)
    assert again is not None and again.idempotency_key == "run-1:stuck:p1:1:webhook"
    assert queued(moto_server) == [{"pendingId": SUBJECT, "sessionId": "s1"}]

    # nothing failed is left: a second retry says so and enqueues nothing
    second = signoff("retry", SUBJECT, env=moto_server)
    assert second.returncode == 1 and "no failed notification" in second.stderr
    assert queued(moto_server) == []


def test_retry_all_failed_takes_only_rows_failed_for_good_and_channel_narrows_a_subject(
    moto_server: dict[str, str],
) -> None:
    store = DynamoStore.from_env()
    failed_rows(store)

    one = signoff("retry", SUBJECT, "--channel", "slack", env=moto_server)
    assert one.returncode == 0, one.stderr
    assert one.stdout.splitlines() == [f"{SUBJECT}\tslack\tre-driven"]
    assert queued(moto_server) == [{"pendingId": SUBJECT, "sessionId": "s1"}]

    every = signoff("retry", "--all-failed", env=moto_server)
    assert every.returncode == 0, every.stderr
    assert every.stdout.splitlines() == [f"{SUBJECT}\twebhook\tre-driven"]
    assert not any(row.failed for row in store.outbox.rows(SUBJECT))

    # a subject and --all-failed together, or neither, is a usage error
    both = signoff("retry", SUBJECT, "--all-failed", env=moto_server)
    neither = signoff("retry", env=moto_server)
    assert both.returncode == neither.returncode == 2
