"""Are a batch's notifications sent concurrently? Batch wall time / one send's time.

10 SQS records, each a paused item with 3 webhook channels, go through the
notifier function's batch handler; every channel posts to a local sink that
answers after 200 ms. Sent one after another that is 30 sends, about 30x one
send; the target is <= 3x (the whole batch in flight at once).

    python bench/notifier_fanout.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from signoff.aws.batch import handle_batch
from signoff.channels.build import BuildContext, ChannelSet
from signoff.channels.config import ChannelsConfig
from signoff.clock import SystemClock
from signoff.keys.tokens import signer_from
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier
from signoff.secrets.memory import MemorySecrets
from signoff.store.memory import MemoryStore
from signoff.store.pending_records import OutboxRow, PendingItem
from signoff.store.session_records import Commit, SessionRecord
from tests.support.http_server import RecordingServer, Reply

RECORDS, CHANNELS, DELAY = 10, 3, 0.2
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def paused_items(store: MemoryStore, now: float) -> list[str]:
    """RECORDS paused items, each with one outbox row per channel."""
    ids = []
    for n in range(RECORDS):
        session = SessionRecord(session_id=f"s{n}", agent="bench", tenant="t", environment="e")
        store.sessions.claim(session, purpose="message", owner="bench", until=now + 60, now=now)
        item = PendingItem(
            id=f"p{n}",
            kind="approval",
            session_id=f"s{n}",
            run_id=f"r{n}",
            agent="bench",
            tenant="t",
            environment="e",
            call_id="c",
            tool="issue_refund",
            args={"n": n},
            reason="bench",
            requested_at=now,
            expires_at=now + 3600,
            channels=[f"hook{c}" for c in range(CHANNELS)],
        )
        rows = [
            OutboxRow(
                pending_id=item.id, channel=ch, run_id=item.run_id, kind="approval", created_at=now
            )
            for ch in item.channels
        ]
        paused = session.model_copy(update={"status": "paused", "pending_id": item.id})
        store.sessions.commit(
            Commit(session=paused, pending=item, outbox=rows, release=True), owner="bench"
        )
        ids.append(item.id)
    return ids


def main() -> None:
    clock = SystemClock()
    with RecordingServer() as sink:
        sink.script([Reply(status=204, delay=DELAY)] * (RECORDS * CHANNELS + 20))
        http = httpx.Client(
            timeout=10, follow_redirects=False, limits=httpx.Limits(max_connections=64)
        )
        # Built as the deployed notifier builds them: each on its own, on first use.
        config = ChannelsConfig.model_validate(
            {
                "channels": {
                    f"hook{c}": {
                        "type": "webhook",
                        "url": f"{sink.url}/hook{c}",
                        "secret": {"secret": "bench-hook"},
                        "allowPrivate": True,
                    }
                    for c in range(CHANNELS)
                }
            }
        )
        secrets = MemorySecrets({"bench-hook": SECRET})
        channels = ChannelSet(config, BuildContext(secrets=secrets, clock=clock, client=http))
        composer = Composer(
            signer=signer_from(MemorySecrets({"resume-signing": "k" * 32})),
            public_url="https://api.example.com",
        )
        store = MemoryStore(clock=clock)
        ids = paused_items(store, clock.now().timestamp())
        notifier = Notifier(
            pending=store.pending,
            outbox=store.outbox,
            channels=channels,
            composer=lambda: composer,
            clock=clock,
        )
        # one send on its own, for the unit of time (median of 5)
        single = []
        note = composer.for_item(store.pending.get(ids[0]))  # type: ignore[arg-type]
        for i in range(5):
            started = time.perf_counter()
            channels["hook0"].notify(note, f"warm-{i}")
            single.append(time.perf_counter() - started)
        one = statistics.median(single)
        event = {
            "Records": [
                {
                    "messageId": f"m{n}",
                    "body": json.dumps({"pendingId": pid}),
                    "eventSource": "aws:sqs",
                    "receiptHandle": "x",
                    "attributes": {},
                    "messageAttributes": {},
                    "md5OfBody": "",
                    "eventSourceARN": "arn:aws:sqs:us-east-1:1:q",
                    "awsRegion": "us-east-1",
                }
                for n, pid in enumerate(ids)
            ]
        }
        started = time.perf_counter()
        result = handle_batch(notifier, event, None)
        batch = time.perf_counter() - started
        assert result["batchItemFailures"] == [], result
        sent = sum(1 for pid in ids for row in store.outbox.rows(pid) if row.notified_at)
        assert sent == RECORDS * CHANNELS, sent
    print(
        f"notifier fan-out: {RECORDS} records x {CHANNELS} channels in {batch:.2f} s, one send "
        f"{one:.2f} s: ratio {batch / one:.1f} (target <= 3; serial would be ~{RECORDS * CHANNELS})"
    )


if __name__ == "__main__":
    main()
