"""``signoff outbox list | retry``: inspect notifications and re-drive the failed ones.

The rows live in the deployment's table (``SIGNOFF_TABLE``, ``SIGNOFF_BUCKET``;
``AWS_ENDPOINT_URL`` points boto3 at a local endpoint). ``retry`` is for after
the cause is fixed (a secret created, a URL corrected, a library added to the
layer): it makes failed rows sendable again with one conditional write each
(only a row that is failed: a sent one is never sent twice) and enqueues their
subjects on the notify queue (``SIGNOFF_NOTIFY_QUEUE_URL``). The notifier then
sends them with the same idempotency key as before.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from signoff.clock import iso
from signoff.errors import SignoffError, UsageError

if TYPE_CHECKING:
    import argparse

    from signoff.channels.subject import Subject
    from signoff.queue.base import Queue
    from signoff.store.base import OperatorOutbox
    from signoff.store.dynamodb import DynamoStore
    from signoff.store.pending_records import OutboxRow

__all__ = ["register"]

EXIT_OK = 0
EXIT_NOTHING = 1  # nothing was failed: a script re-driving a subject hears it
COLUMNS = ("subject", "channel", "kind", "attempts", "status", "reason")
# "every row waiting for a slow retry": later than any schedule would put one
HORIZON = 10 * 365 * 86400.0
PAGE = 100


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``outbox`` command and its subcommands to the ``signoff`` parser."""
    outbox = commands.add_parser("outbox", help="list notifications and re-drive failed ones")
    actions = outbox.add_subparsers(required=True, metavar="action")

    listing = actions.add_parser(
        "list", help="rows not sent: unsent, waiting for a retry, failed (tab-separated)"
    )
    listing.add_argument("--failed", action="store_true", help="only rows failed for good")
    listing.add_argument(
        "--pending-id", default=None, metavar="ID", help="every row of one subject, sent or not"
    )
    listing.set_defaults(command=_list)

    retry = actions.add_parser(
        "retry", help="make failed rows sendable again and enqueue them (same idempotency key)"
    )
    which = retry.add_mutually_exclusive_group(required=True)
    which.add_argument("pending_id", nargs="?", metavar="PENDING_ID", help="a subject's rows")
    which.add_argument("--all-failed", action="store_true", help="every row failed for good")
    retry.add_argument("--channel", default=None, help="only this channel's row of the subject")
    retry.set_defaults(command=_retry)


def _store() -> DynamoStore:
    # Checked here as well as in from_env: a command-line user needs to hear
    # which table is meant, not that the template sets it for every function.
    if not os.environ.get("SIGNOFF_TABLE"):
        raise UsageError(
            "SIGNOFF_TABLE is not set: name the DynamoDB table that holds the outbox "
            "(and set AWS_ENDPOINT_URL to use a local endpoint)"
        )
    from signoff.store.dynamodb import DynamoStore

    return DynamoStore.from_env()


def _when(epoch: float) -> str:
    return iso(datetime.fromtimestamp(epoch, UTC))


def _status(row: OutboxRow) -> str:
    if row.notified_at is not None:
        return f"sent {_when(row.notified_at)}"
    if row.failed and row.retry_at is not None:
        return f"retry {_when(row.retry_at)} (failure {row.failures})"
    if row.failed:
        return f"failed (failure {row.failures})"
    return "unsent"


def _line(row: OutboxRow) -> str:
    # one line per row: a reason never spans lines or columns
    reason = " ".join((row.last_error or "").split())
    cells = [row.pending_id, row.channel, row.kind, str(row.attempts), _status(row), reason]
    return "\t".join(cells)


def _list(args: argparse.Namespace) -> int:
    outbox: OperatorOutbox = _store().outbox
    now = time.time()
    if args.pending_id is not None:
        rows = outbox.rows(args.pending_id)
        if args.failed:
            rows = [row for row in rows if row.failed]
    elif args.failed:
        rows = outbox.failed(limit=10 * PAGE)
    else:
        rows = [
            *outbox.unsent(created_before=now, limit=PAGE),
            *outbox.retries_due(now + HORIZON, limit=PAGE),
            *outbox.failed(limit=PAGE),
        ]
    print("\t".join(COLUMNS))
    for row in rows:
        print(_line(row))
    return EXIT_OK


def _retry(args: argparse.Namespace) -> int:
    from signoff.durable.sweeper import session_of
    from signoff.queue.sqs import SqsQueue

    store = _store()
    outbox: OperatorOutbox = store.outbox
    queue = SqsQueue.from_env()  # before any write: no row is reset without a queue
    now = time.time()
    if args.all_failed:
        if args.channel is not None:
            raise UsageError("--channel names a row of one subject: give its PENDING_ID")
        candidates = outbox.failed(limit=10 * PAGE)
    else:
        candidates = [row for row in outbox.rows(args.pending_id) if row.failed]
        if args.channel is not None:
            candidates = [row for row in candidates if row.channel == args.channel]
    redriven: dict[Subject, list[str]] = {}
    sessions: dict[Subject, str | None] = {}
    for row in candidates:
        # the conditional write: a row sent or re-driven meanwhile is left alone
        if outbox.redrive(row.pending_id, row.channel, now=now, due_only=False):
            redriven.setdefault(row.subject, []).append(row.channel)
            sessions[row.subject] = session_of(row, store.pending)
    if not redriven:
        what = args.pending_id if not args.all_failed else "the outbox"
        channel = f" on channel {args.channel}" if args.channel else ""
        print(f"signoff: no failed notification in {what}{channel} to retry", file=sys.stderr)
        return EXIT_NOTHING
    for subject, channels in redriven.items():
        for channel in channels:
            print(f"{subject}\t{channel}\tre-driven")
        _enqueue(queue, subject, sessions[subject])
    return EXIT_OK


def _enqueue(queue: Queue, subject: Subject, session_id: str | None) -> None:
    from signoff.notify.message import NotifyMessage

    if session_id is None:
        print(f"signoff: {subject}: its pending item is gone; nothing to send", file=sys.stderr)
        return
    try:
        queue.send(NotifyMessage.of(subject, session_id).wire())
    except SignoffError as exc:
        # the rows are unsent again: the sweeper enqueues them after its grace period
        print(f"signoff: {subject}: enqueue failed ({exc}); the sweeper sends it", file=sys.stderr)
