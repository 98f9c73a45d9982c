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

Prices: ``PRICES`` below, list prices for us-east-1 (x86_64) as AWS published them in
2025 (Lambda, DynamoDB on-demand after the November 2024 reduction, SQS standard,
HTTP API, S3 Standard, SES, Secrets Manager, Step Functions Standard), typed in by
hand: no network here, so check them before quoting. Free tiers are left out, and so
are X-Ray, CloudWatch Logs and metrics, and the sweeper's schedule (per deployment,
not per turn). The local durations have no model latency (the agent's scripted model
answers at once): on AWS a turn's billed duration also holds every second spent
waiting for the model, priced per second below the table.

The anchor: the same workflow as a Step Functions Standard state machine, billed per
state transition — call the model, choose, notify (a Parallel with one branch per
channel), wait for the decision (``.waitForTaskToken``), choose, run the tool, call the
model again, succeed — with the same Lambda work for its tasks on top.

    python bench/aws_cost.py        # `make bench` runs it
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import math
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.metering import GlobalIndex, global_indexes, index_writes, read_units, write_units

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

ROOT = Path(__file__).resolve().parents[1]
REFUND = "order A-1001 arrived broken, can you refund it?"
TURNS = 1_000
WAIT = 30.0
QUIET = 2.0  # seconds with no function running: the turn's work is done

# -- prices ----------------------------------------------------------------------------------

PRICES_AS_OF: Final = "2025, us-east-1, x86_64 (AWS pricing pages; free tiers left out)"


@dataclass(frozen=True)
class Price:
    usd: Decimal
    per: int
    unit: str


PRICES: Final = {
    "lambda.request": Price(Decimal("0.20"), 1_000_000, "requests"),
    "lambda.gb_second": Price(Decimal("0.0000166667"), 1, "GB-second (x86_64)"),
    "dynamodb.wru": Price(Decimal("0.625"), 1_000_000, "write request units (on-demand)"),
    "dynamodb.rru": Price(Decimal("0.125"), 1_000_000, "read request units (on-demand)"),
    "sqs.request": Price(Decimal("0.40"), 1_000_000, "requests (standard, per 64 KB)"),
    "apigateway.request": Price(Decimal("1.00"), 1_000_000, "HTTP API requests"),
    "s3.put": Price(Decimal("0.005"), 1_000, "PUT, COPY, POST, LIST requests"),
    "s3.get": Price(Decimal("0.0004"), 1_000, "GET and other requests"),
    "ses.email": Price(Decimal("0.10"), 1_000, "emails"),
    "secretsmanager.call": Price(Decimal("0.05"), 10_000, "API calls"),
    "states.transition": Price(Decimal("0.025"), 1_000, "state transitions (Standard)"),
}

# The services that keep a turn's state between its steps: what the anchor's transitions
# stand in for.
STATE: Final = frozenset({"dynamodb", "sqs", "s3", "secretsmanager"})

# The Step Functions Standard version of the same turn: each state entered is a transition.
STATE_MACHINE: Final = (
    "CallModel (Task)",
    "NeedsApproval (Choice)",
    "Notify (Parallel)",
    "Webhook (Task, branch 1)",
    "Email (Task, branch 2)",
    "WaitForDecision (Task .waitForTaskToken)",
    "Approved (Choice)",
    "RunTool (Task)",
    "CallModelAgain (Task)",
    "Done (Succeed)",
)

# -- DynamoDB capacity from item sizes -------------------------------------------------------

KEY: Final = ("pk", "sk")


def template_indexes(template: Path | None = None) -> tuple[GlobalIndex, ...]:
    """The global secondary indexes ``template`` (default: the project's) gives the table."""
    from signoff_dev.local.template import load_template

    return global_indexes(load_template(template or ROOT / "template.yaml"))


INDEXES: Final = template_indexes()


def _value_size(value: dict[str, Any]) -> int:
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "B":
        return len(inner)
    if kind == "N":
        digits = inner.lstrip("-").replace(".", "").lstrip("0") or "0"
        return 1 + math.ceil(len(digits) / 2)
    if kind in {"BOOL", "NULL"}:
        return 1
    if kind == "L":
        return 3 + sum(1 + _value_size(item) for item in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + _value_size(v) for k, v in inner.items())
    if kind == "SS":
        return sum(len(s.encode()) for s in inner)
    if kind == "NS":
        return sum(_value_size({"N": n}) for n in inner)
    return sum(len(b) for b in inner)  # BS


def item_size(item: dict[str, Any] | None) -> int:
    """An item's size as DynamoDB bills it: each attribute's name plus its value."""
    return sum(len(name.encode()) + _value_size(v) for name, v in (item or {}).items())


def index_write_units(
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    indexes: Sequence[GlobalIndex] = INDEXES,
) -> int:
    """What a write costs in the sparse indexes the item is in, then or now."""
    return sum(
        units for index in indexes for _, units in index_writes(index, before, after, item_size)
    )


# -- the recorder ----------------------------------------------------------------------------


@dataclass
class Invocation:
    function: str
    trigger: str  # http, sqs, async, schedule
    seconds: float


@dataclass
class Recorder:
    """Every request the functions make while ``on``, and every invocation they serve."""

    on: bool = False
    requests: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # fn, svc, op
    rru: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))  # by function
    wru: Counter[str] = field(default_factory=Counter)
    invocations: list[Invocation] = field(default_factory=list)
    batches: int = 0  # SQS batches the event source mapping delivered
    indexes: tuple[GlobalIndex, ...] = INDEXES  # the measured template's
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _running: Counter[str] = field(default_factory=Counter)
    _local: threading.local = field(default_factory=threading.local)
    last_active: float = 0.0

    def running(self) -> int:
        with self._lock:
            return sum(self._running.values())

    def function_now(self) -> str | None:
        named: str | None = getattr(self._local, "function", None)
        if named is not None or getattr(self._local, "private", False):
            return named
        if threading.current_thread().name in {"sqs-poller", "MainThread"}:
            return None  # the event source mapping's own polls; the workload's requests
        with self._lock:
            running = [name for name, count in self._running.items() if count]
        return running[0] if len(running) == 1 else None

    @contextlib.contextmanager
    def private(self) -> Iterator[None]:
        """Requests made inside are the recorder's own (item images), never recorded."""
        self._local.private = True
        try:
            yield
        finally:
            self._local.private = False

    def install(
        self, images: Callable[[str, dict[str, Any]], dict[str, Any] | None]
    ) -> Callable[[], None]:
        """Wrap botocore's one request path and the local stack's one invocation path,
        and the thread pools' submit: work a function hands to a pool (the notifier's
        sends, its batch's deliveries) is that function's, whatever else runs meanwhile.

        Returns what puts all three back.
        """
        from concurrent.futures import ThreadPoolExecutor

        from botocore.client import BaseClient

        from signoff_dev.local.functions import LocalFunction

        recorder = self
        make_api_call = BaseClient._make_api_call  # type: ignore[attr-defined]
        invoke = LocalFunction.invoke
        submit = ThreadPoolExecutor.submit

        def submitted(pool: ThreadPoolExecutor, task: Any, /, *args: Any, **kwargs: Any) -> Any:
            function = getattr(recorder._local, "function", None)
            if function is None:
                return submit(pool, task, *args, **kwargs)

            def attributed(*args: Any, **kwargs: Any) -> Any:
                recorder._local.function = function
                try:
                    return task(*args, **kwargs)
                finally:
                    recorder._local.function = None

            return submit(pool, attributed, *args, **kwargs)

        def recorded(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
            function = recorder.function_now() if recorder.on else None
            if function is None:
                return make_api_call(client, operation, params)
            service = client.meta.service_model.service_name
            with recorder._lock:
                recorder.requests[(function, service, operation)] += 1
            if service != "dynamodb":
                return make_api_call(client, operation, params)
            return recorder._dynamodb(
                function,
                operation,
                params,
                lambda: make_api_call(client, operation, params),
                images,
            )

        def invoked(local: LocalFunction, event: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            trigger = (
                "http"
                if "routeKey" in event
                else "sqs"
                if "Records" in event
                else "schedule"
                if "detail-type" in event
                else "async"
            )
            recorder._local.function = local.name
            with recorder._lock:
                recorder._running[local.name] += 1
            started = time.perf_counter()
            try:
                return invoke(local, event, *args, **kwargs)
            finally:
                seconds = time.perf_counter() - started
                recorder._local.function = None
                with recorder._lock:
                    recorder._running[local.name] -= 1
                    recorder.last_active = time.monotonic()
                    if recorder.on:
                        recorder.invocations.append(Invocation(local.name, trigger, seconds))
                        recorder.batches += trigger == "sqs"

        BaseClient._make_api_call = recorded  # type: ignore[attr-defined]
        LocalFunction.invoke = invoked  # type: ignore[assignment, method-assign]
        ThreadPoolExecutor.submit = submitted  # type: ignore[assignment, method-assign]

        def uninstall() -> None:
            ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]
            BaseClient._make_api_call = make_api_call  # type: ignore[attr-defined]
            LocalFunction.invoke = invoke  # type: ignore[method-assign]

        return uninstall

    def _dynamodb(
        self,
        function: str,
        operation: str,
        params: dict[str, Any],
        call: Callable[[], Any],
        images: Callable[[str, dict[str, Any]], dict[str, Any] | None],
    ) -> Any:
        writes = _writes(operation, params)  # (table, key, transactional, attempted item)
        with self.private():
            before = [images(table, key) for table, key, _, _ in writes]
        failed: BaseException | None = None
        try:
            answer = call()
        except Exception as error:  # a failed condition is still charged
            failed, answer = error, {}
        with self.private():
            after = [images(table, key) for table, key, _, _ in writes]
        wru = 0
        for (_, _, transactional, attempted), was, now in zip(writes, before, after, strict=True):
            size = max(item_size(was), item_size(now), item_size(attempted))
            wru += write_units(size) * (2 if transactional else 1)
            if failed is None:  # a refused write changes no index
                wru += index_write_units(was, now, self.indexes)
        rru = _reads(operation, params, answer)
        with self._lock:
            self.wru[function] += wru
            self.rru[function] += rru
        if failed is not None:
            raise failed
        return answer


def _key_of(item: dict[str, Any]) -> dict[str, Any]:
    return {name: item[name] for name in KEY}


def _writes(
    operation: str, params: dict[str, Any]
) -> list[tuple[str, dict[str, Any], bool, dict[str, Any] | None]]:
    if operation == "PutItem":
        return [(params["TableName"], _key_of(params["Item"]), False, params["Item"])]
    if operation in {"UpdateItem", "DeleteItem"}:
        return [(params["TableName"], params["Key"], False, None)]
    if operation == "TransactWriteItems":
        found = []
        for entry in params["TransactItems"]:
            ((_, spec),) = entry.items()
            item = spec.get("Item")
            found.append((spec["TableName"], spec.get("Key") or _key_of(item), True, item))
        return found
    if operation == "BatchWriteItem":
        return [
            (
                table,
                request.get("DeleteRequest", {}).get("Key")
                or _key_of(request["PutRequest"]["Item"]),
                False,
                request.get("PutRequest", {}).get("Item"),
            )
            for table, requests in params["RequestItems"].items()
            for request in requests
        ]
    return []


def _reads(operation: str, params: dict[str, Any], answer: dict[str, Any]) -> float:
    consistent = bool(params.get("ConsistentRead"))
    if operation == "GetItem":
        return read_units(item_size(answer.get("Item")), consistent=consistent)
    if operation in {"Query", "Scan"}:
        total = sum(item_size(item) for item in answer.get("Items", []))
        return read_units(total, consistent=consistent)
    if operation == "TransactGetItems":
        return sum(
            2 * read_units(item_size(got.get("Item")), consistent=True)
            for got in answer.get("Responses", [])
        )
    if operation == "BatchGetItem":
        return sum(
            read_units(item_size(item), consistent=consistent)
            for items in answer.get("Responses", {}).values()
            for item in items
        )
    return 0.0


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


def memory_of(template: dict[str, Any]) -> dict[str, int]:
    shared = template.get("Globals", {}).get("Function", {}).get("MemorySize", 128)
    return {
        logical_id: int(resource["Properties"].get("MemorySize", shared))
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


# -- the report ------------------------------------------------------------------------------


def per_thousand(key: str, quantity: float) -> Decimal:
    price = PRICES[key]
    return price.usd * Decimal(str(quantity)) * TURNS / price.per


def report(recorder: Recorder, memory: dict[str, int]) -> None:
    print(f"One approval turn on the local stack, priced per {TURNS:,} turns ({PRICES_AS_OF})")
    print("\nAWS requests of one turn, by function, service and operation:")
    for (function, service, operation), made in sorted(recorder.requests.items()):
        print(f"  {function:<20} {service:<16} {operation:<22} {made:>3}")
    print(f"  {'(event source map)':<20} {'sqs':<16} {'ReceiveMessage':<22} {recorder.batches:>3}")
    print(
        f"  {'(event source map)':<20} {'sqs':<16} {'DeleteMessageBatch':<22} {recorder.batches:>3}"
    )

    def count(service: str, *operations: str) -> int:
        return sum(
            n
            for (_, svc, op), n in recorder.requests.items()
            if svc == service and (not operations or op in operations)
        )

    print("\nLambda invocations:")
    gb_seconds = 0.0
    for invocation in recorder.invocations:
        billed_ms = math.ceil(invocation.seconds * 1000)
        gb_seconds += billed_ms / 1000 * memory[invocation.function] / 1024
        print(
            f"  {invocation.function:<20} {invocation.trigger:<8} {billed_ms:>6} ms billed"
            f" at {memory[invocation.function]} MB"
        )
    wru, rru = sum(recorder.wru.values()), sum(recorder.rru.values())
    print("\nDynamoDB capacity (computed from item sizes):")
    for function in sorted(set(recorder.wru) | set(recorder.rru)):
        print(
            f"  {function:<20} {recorder.wru[function]:>5} WRU  {recorder.rru[function]:>6.1f} RRU"
        )
    sqs = count("sqs") + 2 * recorder.batches
    api = sum(1 for i in recorder.invocations if i.trigger == "http")
    lines = [
        ("Lambda requests", "lambda.request", len(recorder.invocations)),
        ("Lambda duration (GB-s)", "lambda.gb_second", gb_seconds),
        ("DynamoDB writes (WRU)", "dynamodb.wru", wru),
        ("DynamoDB reads (RRU)", "dynamodb.rru", rru),
        ("SQS requests", "sqs.request", sqs),
        ("HTTP API requests", "apigateway.request", api),
        ("S3 PUT/LIST", "s3.put", count("s3", "PutObject", "ListObjectsV2")),
        ("S3 GET/HEAD", "s3.get", count("s3", "GetObject", "HeadObject")),
        (
            "SES emails",
            "ses.email",
            count("ses", "SendEmail", "SendRawEmail") + count("sesv2", "SendEmail"),
        ),
        ("Secrets Manager calls", "secretsmanager.call", count("secretsmanager")),
    ]
    print(f"\nCost per {TURNS:,} approval turns:")
    total = Decimal(0)
    for label, key, quantity in lines:
        cost = per_thousand(key, quantity)
        total += cost
        print(f"  {label:<24} {quantity:>10.3f} per turn  ${cost:>9.5f}")
    print(f"  {'signoff, total':<24} {'':>19}  ${total:>9.5f}")
    # What keeps the turn's state between its steps; Lambda, the API and SES are the
    # work either design pays for (the state machine's tasks are Lambda functions too).
    state = sum(
        (per_thousand(key, quantity) for _, key, quantity in lines if key.split(".")[0] in STATE),
        Decimal(0),
    )
    transitions = len(STATE_MACHINE)
    states = per_thousand("states.transition", transitions)
    print(
        f"\nAnchor, Step Functions Standard: {transitions} state transitions per turn"
        f" ({', '.join(STATE_MACHINE)})"
    )
    print(f"  transitions alone                       ${states:>9.5f} per {TURNS:,} turns")
    print(
        f"  signoff's state beside them             ${state:>9.5f} per {TURNS:,} turns"
        " (DynamoDB, SQS, S3, Secrets Manager; Lambda, the API and SES are paid by both)"
    )
    memory_mb = memory.get("MessageFunction", 512)
    model_second = per_thousand("lambda.gb_second", memory_mb / 1024)
    print(
        f"  every second of model time in a turn adds ${model_second:.5f} per {TURNS:,} turns"
        f" ({memory_mb} MB) on either: Lambda waits for the model in both"
    )


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
