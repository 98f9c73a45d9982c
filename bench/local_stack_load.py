"""How many approvals a second does the local stack finish under concurrent load?

Starts a local stack (free ports, environment ``production``), then 20 client
threads on loopback walk 200 sessions through a durable approval each: the
customer-service refund message (202 approval) → the notification at the
webhook sink → Approve (half on the link page's form, half through
``POST /approvals/{id}/approve``) → the status URL says ``done``. Bounded: a
session not done within the timeout is a failure. Afterwards it prints the
count checks (every turn done; every outbox row sent and delivered exactly once
per channel, read from DynamoDB through boto3 against the emulator; every item
resolved exactly once, by its audit trail) and, last, one summary line whose
comparable figure is the throughput: completed approvals per second of wall
time (of the local stack with its emulator, not of AWS: moto copies the whole
table for every DynamoDB transaction, so larger runs are slower per session).
Exits 1 if any check fails. See ``signoff_dev.local.load``.

    python bench/local_stack_load.py [--sessions 200] [--clients 20] [--timeout 300]
"""

from __future__ import annotations

import argparse
import io
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from signoff_dev.local.load import run_load
from signoff_dev.local.stack import LocalStack, StackSettings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole run")
    args = parser.parse_args()
    # Powertools warns on every invocation that publishes no metric; noise here.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    behind = io.StringIO()  # the stack's console and the functions' logs, shown on failure
    stack = LocalStack(StackSettings(port=0, environment="production", console=behind, logs=behind))
    stack.start()
    try:
        report = run_load(stack, sessions=args.sessions, clients=args.clients, timeout=args.timeout)
    finally:
        stack.stop()
    if not report.ok:
        print(f"what the stack logged (tail):\n{behind.getvalue()[-4000:]}", file=sys.stderr)
    for line in report.lines():
        print(line)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
