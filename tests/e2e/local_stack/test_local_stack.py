"""The local stack over real HTTP on loopback: the handlers, routed from ``template.yaml``,
on moto's server, with the SQS poller, the schedules and the webhook sink.

One stack serves the module (started on free ports); the ``signoff demo`` and
``signoff dev`` commands run as subprocesses, each with a stack of its own.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from signoff.errors import UsageError
from signoff_dev.local.gateway import HttpRequest, api_gateway_event
from signoff_dev.local.poller import QueuePoller, Schedule
from signoff_dev.local.stack import LocalStack, StackSettings
from signoff_dev.local.template import Tag, find_template, load_template
from tests.support.local_stack import (
    REFUND,
    emulator_client,
    eventually,
    finished,
    notification_for,
    pending_item,
)
from tests.support.local_stack import (
    http as http,
)
from tests.support.local_stack import (
    stack as stack,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

ROOT = find_template().parent
GATEWAY_NOT_FOUND = {"message": "Not Found"}  # API Gateway's own answer: no route matched


def template_routes() -> set[tuple[str, str]]:
    """(method, path) of every HttpApi event in template.yaml, read here on its own."""
    found = set()
    for resource in load_template()["Resources"].values():
        for event in resource.get("Properties", {}).get("Events", {}).values():
            if event["Type"] == "HttpApi":
                props = event["Properties"]  # no Path and no Method: the $default route
                found.add((props.get("Method", "ANY").upper(), props.get("Path", "$default")))
    return found


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    code = "import sys; from signoff_dev.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# -- an approval end to end ----------------------------------------------------------------


def test_a_paused_refund_is_notified_shown_approved_on_its_page_and_finished(
    stack: LocalStack, http: httpx.Client
) -> None:
    # given a production refund from an anonymous caller (the default tenant)
    sent = http.post("/agents/customer-service/messages", json={"message": REFUND})
    assert sent.status_code == 202, sent.text
    paused = sent.json()
    assert paused["type"] == "approval" and paused["tool"] == "issue_refund"

    # then the webhook sink received the signed notification (it keeps only verified ones)
    received = notification_for(http, paused["id"])
    notification = received["notification"]
    assert received["webhookId"].endswith(f":{paused['id']}:local-webhook")
    assert notification["kind"] == "approval" and notification["sessionId"] == paused["sessionId"]
    link = notification["linkUrl"]
    assert link.startswith(f"{stack.url}/a/")

    # when the link is opened, the page shows the call and nothing changes
    page = http.get(link)
    assert page.status_code == 200 and "issue_refund" in page.text
    assert pending_item(stack, paused["id"])["status"]["S"] == "pending"
    assert http.get(paused["statusUrl"]).json()["status"] == "paused"

    # when Approve is posted from the page (a browser sends the page's own origin)
    token = link.rsplit("/", 1)[1]
    form = {"token": token, "decision": "approve"}
    approved = http.post(link, data=form, headers={"origin": stack.url})
    assert approved.status_code == 200, approved.text
    assert pending_item(stack, paused["id"])["status"]["S"] == "approved"

    # then the session is done with the refund's text
    status = finished(http, paused)
    assert status["text"].startswith("Refunded 42.0 USD for order A-1001")

    # and a second decision changes nothing
    again = http.post(link, data=form, headers={"origin": stack.url})
    assert again.status_code == 409


def test_a_form_posted_from_another_site_is_refused(stack: LocalStack, http: httpx.Client) -> None:
    paused = http.post("/agents/customer-service/messages", json={"message": REFUND}).json()
    link = notification_for(http, paused["id"])["notification"]["linkUrl"]
    form = {"token": link.rsplit("/", 1)[1], "decision": "approve"}
    refused = http.post(link, data=form, headers={"origin": "http://evil.example"})
    assert refused.status_code == 403
    assert pending_item(stack, paused["id"])["status"]["S"] == "pending"


def test_the_sink_refuses_a_delivery_whose_signature_does_not_verify(http: httpx.Client) -> None:
    before = len(http.get("/_local/notifications").json()["notifications"])
    forged = http.post(
        "/_local/webhook",
        content=json.dumps({"kind": "approval"}),
        headers={
            "content-type": "application/json",
            "webhook-id": "forged",
            "webhook-timestamp": str(int(time.time())),
            "webhook-signature": "v1,AAAA",
        },
    )
    assert forged.status_code == 401
    assert len(http.get("/_local/notifications").json()["notifications"]) == before


# -- routing from the template ---------------------------------------------------------------


def test_the_routes_served_are_the_templates_http_api_events(stack: LocalStack) -> None:
    served = {(route.method, route.path) for route in stack.routes}
    assert served == template_routes()


@pytest.mark.parametrize("route", sorted(r for r in template_routes() if r[1] != "$default"))
def test_every_template_route_reaches_its_function(
    stack: LocalStack, http: httpx.Client, route: tuple[str, str]
) -> None:
    method, path = route
    concrete = path.replace("{name}", "no-such-agent").replace("{id}", "x").replace("{token}", "x")
    # from the stack's own origin, as its pages send: the guard lets it through
    answer = http.request(method, concrete, headers={"origin": stack.url})
    # the function answered (its own status), not the gateway's "no route"
    assert not (answer.status_code == 404 and _json(answer) == GATEWAY_NOT_FOUND), answer.text


@pytest.mark.parametrize(
    ("method", "path", "status", "allow"),
    [
        ("GET", "/no/such/route", 404, None),
        ("DELETE", "/agents", 405, "GET"),
        ("PROPFIND", "/agents", 405, "GET"),
        ("GET", "/agents/x/messages", 405, "POST"),  # the other function's route
        ("HEAD", "/a/x", 405, "GET, POST"),
        ("GET", "/_local/trigger", 405, "POST"),  # a local-only route
    ],
)
def test_a_request_no_route_takes_gets_a_json_404_or_a_405_with_allow(
    http: httpx.Client, method: str, path: str, status: int, allow: str | None
) -> None:
    # API Gateway's $default route sends what no route matches to the resolve function
    answer = http.request(method, path)
    assert answer.status_code == status, answer.text
    assert answer.headers.get("allow") == allow
    if method != "HEAD":
        assert set(answer.json()) >= {"error", "detail"}


def _shape(event: dict[str, Any]) -> dict[str, Any]:
    """Keys and value types, header names aside (they vary by client)."""
    return {
        key: _shape(value) if isinstance(value, dict) and key != "headers" else type(value).__name__
        for key, value in event.items()
    }


def test_the_event_a_function_gets_has_the_shape_api_gateway_sends(stack: LocalStack) -> None:
    recorded = json.loads((ROOT / "events" / "message_post.json").read_text())
    route = next(r for r in stack.routes if r.route_key == recorded["routeKey"])
    request = HttpRequest(
        method="POST",
        raw_path=recorded["rawPath"],
        raw_query="",
        headers=list(recorded["headers"].items()),
        body=recorded["body"].encode(),
        source_ip="127.0.0.1",
        protocol="HTTP/1.1",
    )
    built = api_gateway_event(route, {"name": "customer-service"}, request)
    assert _shape(built) == _shape(recorded)
    assert built["body"] == recorded["body"] and built["isBase64Encoded"] is False


def test_a_binary_body_arrives_base64_encoded_and_query_repeats_joined(
    stack: LocalStack,
) -> None:
    route = stack.routes[0]
    request = HttpRequest(
        method=route.method,
        raw_path=route.path,
        raw_query="a=1&a=2&b=",
        headers=[("Content-Type", "application/octet-stream"), ("Cookie", "s=1; t=2")],
        body=bytes([0, 255, 1]),
        source_ip="127.0.0.1",
        protocol="HTTP/1.1",
    )
    built = api_gateway_event(route, {}, request)
    assert built["isBase64Encoded"] is True and built["body"] == "AP8B"
    assert built["queryStringParameters"] == {"a": "1,2", "b": ""}
    assert built["cookies"] == ["s=1", "t=2"] and "cookie" not in built["headers"]


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


# -- the event sources ---------------------------------------------------------------------


def test_the_poller_deletes_only_the_records_the_function_did_not_report_failed(
    stack: LocalStack,
) -> None:
    sqs = emulator_client(stack, "sqs")
    url = sqs.create_queue(QueueName="poller-test", Attributes={"VisibilityTimeout": "1"})[
        "QueueUrl"
    ]
    for n in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"n": n}))
    batches: list[dict[str, Any]] = []

    def notifier(event: dict[str, Any]) -> dict[str, Any]:
        batches.append(event)
        failed = [r for r in event["Records"] if json.loads(r["body"])["n"] == 1]
        return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in failed]}

    poller = QueuePoller(
        sqs=sqs,
        queue_url=url,
        queue_arn="arn:aws:sqs:us-east-1:123456789012:poller-test",
        batch_size=10,
        report_failures=True,
        invoke=notifier,
        log=lambda _: None,
        stop=threading.Event(),
    )
    received = 0
    while received < 3:
        received += poller.poll_once()
    assert all(r["eventSource"] == "aws:sqs" for batch in batches for r in batch["Records"])

    # the failed record comes back after the visibility timeout; the others are gone
    again = eventually(lambda: poller.poll_once(), "the failed record to come back")
    assert again == 1
    assert json.loads(batches[-1]["Records"][0]["body"]) == {"n": 1}
    assert batches[-1]["Records"][0]["attributes"]["ApproximateReceiveCount"] == "2"


def test_a_schedule_invokes_its_function_with_eventbridges_event_every_period() -> None:
    events: list[dict[str, Any]] = []
    stop = threading.Event()
    schedule = Schedule(
        rule="signoff-SweeperFunctionEveryMinute",
        period=0.05,
        invoke=lambda event: events.append(event) or {},
        log=lambda _: None,
        stop=stop,
    )
    schedule.start()
    eventually(lambda: len(events) >= 3, "three runs")
    stop.set()
    schedule.join(1.0)
    assert events[0]["detail-type"] == "Scheduled Event" and events[0]["source"] == "aws.events"


def test_the_stack_runs_the_sweeper_on_the_templates_schedule(stack: LocalStack) -> None:
    [sweeper] = stack.schedules
    assert sweeper.period == 60 and "SweeperFunction" in sweeper.rule
    rate = load_template()["Resources"]["SweeperFunction"]["Properties"]["Events"]
    assert rate["EveryMinute"]["Properties"]["Schedule"] == "rate(1 minute)"
    # and a poller per queue a function's SQS trigger reads: the notify queue into the
    # notifier, the sweep's tasks into the sweep workers
    assert sorted(p.queue_url.rsplit("/", 1)[-1] for p in stack.pollers) == [
        "signoff-NotifyQueue",
        "signoff-SweepQueue",
    ]
    resources = load_template()["Resources"]
    queue = resources["NotifierFunction"]["Properties"]["Events"]
    assert queue["Notifications"]["Properties"]["Queue"] == Tag("GetAtt", "NotifyQueue.Arn")
    tasks = resources["SweepWorkerFunction"]["Properties"]["Events"]
    assert tasks["SweepTasks"]["Properties"]["Queue"] == Tag("GetAtt", "SweepQueue.Arn")


def test_the_sweepers_plan_reaches_the_sweep_workers_through_the_queue(stack: LocalStack) -> None:
    sqs = emulator_client(stack, "sqs")
    url, dead = (stack.resources.queues[q] for q in ("SweepQueue", "SweepDeadLetterQueue"))

    def waiting(queue: str) -> int:
        attributes = sqs.get_queue_attributes(
            QueueUrl=queue,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return sum(int(value) for value in attributes.values())

    # When the sweeper runs as its schedule runs it
    [schedule] = stack.schedules
    planned = stack.functions["SweeperFunction"].invoke(schedule.event())

    # Then it planned every job on every shard onto the sweep queue
    shards = int(stack.resources.environment["SIGNOFF_SWEEP_SHARDS"])
    assert planned == {"planned": 4 * shards + 1}
    # And the poller drained them into the sweep workers, which deleted each one: a
    # task that failed would be back after the visibility timeout, or dead-lettered
    eventually(lambda: waiting(url) == 0, "the sweep queue to be drained")
    assert waiting(dead) == 0


# -- the commands ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "text"),
    [
        ((), "Refunded 42.0 USD for order A-1001 to the original payment method."),
        (("--deny",), "Not done: issue_refund was denied."),
        (("--question",), "Refunded 58.5 USD for order A-1002."),
    ],
)
def test_signoff_demo_walks_the_approval_through_and_exits_0(
    flags: tuple[str, ...], text: str
) -> None:
    done = run_cli("demo", *flags)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"text: {text}" in done.stdout
    assert "The demo finished: the turn is done" in done.stdout


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


@pytest.mark.slow
@pytest.mark.parametrize("command", ["dev", "demo"])
def test_a_port_in_use_is_a_clear_error_and_exit_2(busy_port: int, command: str) -> None:
    refused = run_cli(command, "--port", str(busy_port), timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"port {busy_port} is already in use" in refused.stderr


def test_a_stack_that_cannot_start_leaves_the_environment_as_it_was(busy_port: int) -> None:
    before = dict(os.environ)
    with pytest.raises(UsageError, match="already in use"):
        LocalStack(StackSettings(port=busy_port, console=io.StringIO())).start()
    assert dict(os.environ) == before
