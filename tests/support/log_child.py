"""A cold start and invocations of every function, as Lambda runs them: for the log test.

Run as ``python -m tests.support.log_child`` with the functions' environment and a
moto server (``tests/functional/telemetry/test_log_lines.py``). What Lambda's runtime would
take from the process, stdout and stderr, is what the test reads; the root
logger writes plain text to stderr, as any line that bypasses the service's JSON
would appear without the correlation keys.
"""

from __future__ import annotations

import json
import logging
import sys

from tests.support.lambdas import FakeLambdaContext, import_handler, load_event, sqs_event


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(name)s %(message)s")
    message, resolve = import_handler("message"), import_handler("resolve")
    notifier, sweeper = import_handler("notifier"), import_handler("sweeper")
    worker = import_handler("sweep_worker")
    paused = message.handler(load_event("message_post"), FakeLambdaContext())
    assert paused["statusCode"] == 202, paused
    # A read that records no metric (Powertools' empty-metrics case).
    listed = resolve.handler(load_event("agents_list"), FakeLambdaContext())
    assert listed["statusCode"] == 200, listed
    import os

    batch = sqs_event(os.environ["SIGNOFF_NOTIFY_QUEUE_URL"])
    assert batch["Records"], "the pause enqueued nothing"
    notifier.handler(batch, FakeLambdaContext())
    planned = sweeper.handler(load_event("sweeper_schedule"), FakeLambdaContext())
    assert planned["planned"], planned
    # One batch of the sweep's tasks, and the sample's (a task of its own per record).
    worker.handler(sqs_event(os.environ["SIGNOFF_SWEEP_QUEUE_URL"]), FakeLambdaContext())
    worker.handler(load_event("sweep_worker_sqs_batch"), FakeLambdaContext())
    # The test finds this line last, so it knows every invocation ran.
    print(json.dumps({"child": "done"}))


if __name__ == "__main__":
    main()
