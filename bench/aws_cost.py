"""What one approval turn costs on AWS: its requests by service and operation, priced.

Workload: the local stack (``signoff dev``: every function of ``template.yaml`` in
this process on moto, ``signoff_dev.local``) runs customer-service's refund turn end
to end, the way a person does: ``POST /agents/customer-service/messages`` (the turn
pauses for ``issue_refund``), the notifier sends the approval on its two channels
(the webhook and SES email), the approver opens the link (``GET /a/{token}``) and
approves on its page (``POST /a/{token}``), the turn resumes and finishes. One turn
warms the functions first (a cold start's one-off requests — secrets, clients — are
not a turn's); the second is measured.

A botocore recorder (``BaseClient._make_api_call``, which every client request passes)
records each request a function makes while it runs: by the thread running its
handler, by the pool threads it hands work to (the notifier's sends:
``ThreadPoolExecutor.submit`` carries the function along), or, for other threads a
handler starts, while exactly that one function runs. ``LocalFunction.invoke`` is
wrapped to count invocations, their trigger and wall time: Lambda bills the handler's
duration rounded up to the millisecond, times the template's ``MemorySize``. The local
SQS poller stands for Lambda's event source mapping: its own polls run whether or not
there is work, so per batch delivered one ``ReceiveMessage`` and one
``DeleteMessageBatch`` are counted (the modelled minimum), not its idle polls.

DynamoDB capacity is **computed from item sizes**, not read from
``ReturnConsumedCapacity``: moto answers that with fixed figures, and the code's own
requests stay as they are. Around each write the recorder reads the item before and
after (its own unrecorded, consistent reads) and applies DynamoDB's on-demand rules:
a write is 1 WRU per 1 KB of the larger of the two images, a transaction's item 2;
each global secondary index of the template's table (its keys and projection read from
``template.yaml``) is written when the item is in it before or after and the write
changes its entry there — 1 WRU per KB of the entry, 2 writes when its key changes; a
read is 1 RRU per 4 KB (strongly consistent) or 0.5 (eventually), a Query the sum of
the items it returned, a transactional read 2. A conditional write that fails is
charged as a write. The rules are ``bench/metering.py``'s, shared with
``bench/capacity.py``. Item size: attribute names plus values, as DynamoDB counts.

Prices: ``PRICES`` in ``bench/aws_cost_report.py``, list prices for us-east-1 (x86_64)
as AWS published them in 2025 (Lambda, DynamoDB on-demand after the November 2024
reduction, SQS standard, HTTP API, S3 Standard, SES, Secrets Manager, Step Functions
Standard), typed in by hand: no network here, so check them before quoting. Free
tiers are left out, and so are X-Ray, CloudWatch Logs and metrics, and the sweeper's
schedule (per deployment, not per turn). The local durations have no model latency
(the agent's scripted model answers at once): on AWS a turn's billed duration also
holds every second spent waiting for the model, priced per second below the table.

The anchor: the same workflow as a Step Functions Standard state machine, billed per
state transition — call the model, choose, notify (a Parallel with one branch per
channel), wait for the decision (``.waitForTaskToken``), choose, run the tool, call the
model again, succeed — with the same Lambda work for its tasks on top.

    python bench/aws_cost.py        # `make bench` runs it
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.aws_cost_recorder import Recorder
from bench.aws_cost_report import memory_of, report
from bench.aws_cost_units import template_indexes

if TYPE_CHECKING:
    from collections.abc import Callable

REFUND = "order A-1001 arrived broken, can you refund it?"
WAIT = 30.0
QUIET = 2.0  # seconds with no function running: the turn's work is done

# -- the workload ----------------------------------------------------------------------------


def eventually(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def settle(recorder: Recorder) -> None:
    """Wait until no function has run for ``QUIET`` seconds (the notify queue drained)."""
    eventually(
        lambda: recorder.running() == 0 and time.monotonic() - recorder.last_active > QUIET,
        "the functions to settle",
    )


def approval_turn(http: httpx.Client, recorder: Recorder, origin: str) -> dict[str, Any]:
    """message → pause → notify on two channels → open the link → approve → done."""
    mailed = len(http.get("/_local/emails").json()["emails"])
    sent = http.post("/agents/customer-service/messages", json={"message": REFUND})
    if sent.status_code != 202:
        raise SystemExit(f"the turn did not pause: {sent.status_code} {sent.text}")
    paused: dict[str, Any] = sent.json()

    def notified() -> dict[str, Any] | None:
        for got in http.get("/_local/notifications").json()["notifications"]:
            if got["notification"].get("pendingId") == paused["id"]:
                return dict(got["notification"])
        return None

    link = eventually(notified, "the webhook's notification")["linkUrl"]
    eventually(
        lambda: len(http.get("/_local/emails").json()["emails"]) > mailed, "the approval email"
    )
    settle(recorder)
    if http.get(link).status_code != 200:
        raise SystemExit(f"the link page did not open: {link}")
    form = {"token": link.rsplit("/", 1)[1], "decision": "approve"}
    approved = http.post(link, data=form, headers={"origin": origin})
    if approved.status_code != 200:
        raise SystemExit(f"the approval was refused: {approved.status_code} {approved.text}")
    settle(recorder)
    return paused


def measure(template: Path) -> Recorder:
    """The requests and invocations of one warm approval turn on a local stack of ``template``."""
    from signoff_dev.local.stack import LocalStack, StackSettings

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    recorder = Recorder(indexes=template_indexes(template))
    quiet = io.StringIO()
    settings = StackSettings(
        port=0, console=quiet, logs=quiet, sweep_every=3600.0, template=template
    )
    stack = LocalStack(settings)
    images_client: list[Any] = []

    def images(table: str, key: dict[str, Any]) -> dict[str, Any] | None:
        """The item as stored now: the recorder's before and after image of a write."""
        client = images_client[0]
        item: dict[str, Any] | None = client.get_item(
            TableName=table, Key=key, ConsistentRead=True
        ).get("Item")
        return item

    uninstall = recorder.install(images)
    try:
        stack.start()
        import boto3

        images_client.append(
            boto3.client(
                "dynamodb",
                endpoint_url=stack.aws_endpoint,
                region_name="us-east-1",
                aws_access_key_id="local",
                aws_secret_access_key="local",
            )
        )
        with httpx.Client(base_url=stack.url, timeout=WAIT) as http:
            approval_turn(http, recorder, stack.url)  # warm: the cold start's requests
            recorder.on = True
            paused = approval_turn(http, recorder, stack.url)
            recorder.on = False
            status = http.get(paused["statusUrl"]).json()
            if status.get("status") != "done":
                raise SystemExit(f"the measured turn did not finish: {status}")
    finally:
        stack.stop()
        uninstall()
    return recorder


def main() -> int:
    from signoff_dev.local.template import find_template, load_template

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--template", type=Path, default=None, help="default: template.yaml")
    args = parser.parse_args()
    template = args.template or find_template()
    report(measure(template), memory_of(load_template(template)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
