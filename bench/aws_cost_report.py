"""``bench/aws_cost.py``'s prices and its report: a recorded turn priced per 1,000 turns,
beside the same workflow's state transitions on Step Functions Standard."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from bench.aws_cost_recorder import Recorder

TURNS: Final = 1_000

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
