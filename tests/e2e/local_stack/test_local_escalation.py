"""Escalation on the local stack, the sweeper's clock driven by the test.

Given the customer-service agent notifying a Slack channel (the local fake Slack)
with a ladder ``30m → local-webhook, 2h → slack-oncall, 8h → deny``, when a refund
pauses and ``POST /_local/sweep`` moves the sweeper's clock past each step, then
each channel gets exactly one message per step (the webhook the decision card of
step 1, the on-call Slack channel that of step 2), the first Slack message is
redrawn to say it was escalated, the status route shows where the item stands,
and the final step denies it: the turn ends, and the audit (the status route's
decisions) shows the escalation.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from tests.conftest import ROOT
from tests.support.local_stack import REFUND, eventually, finished, running_stack
from tests.support.slack_api import FakeSlack

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff_dev.local.stack import LocalStack

MESSAGES = "/agents/customer-service/messages"
HOUR = 3600
LADDER = """
escalate:
  - {after: 30m, notify: local-webhook}
  - {after: 2h, notify: slack-oncall}
  - {after: 8h, then: deny}
"""


def slack_channel(name: str, channel_id: str, url: str) -> str:
    return (
        f"  {name}:\n    type: slack\n    channelId: {channel_id}\n"
        f"    botToken: {{secret: slack-bot}}\n    signingSecret: {{secret: slack-signing}}\n"
        f"    baseUrl: {url}\n"
    )


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, slack: FakeSlack) -> Iterator[LocalStack]:
    root = tmp_path_factory.mktemp("escalation") / "agents"
    shutil.copytree(ROOT / "agents", root, ignore=shutil.ignore_patterns("__pycache__"))
    channels = root / "channels.yaml"
    channels.write_text(
        channels.read_text(encoding="utf-8")
        + slack_channel("slack-first", "C-FIRST", slack.url)
        + slack_channel("slack-oncall", "C-ONCALL", slack.url),
        encoding="utf-8",
    )
    config = root / "customer-service" / "agent.yaml"
    text = config.read_text(encoding="utf-8")
    notify = text[text.index("notify:") :]
    config.write_text(
        text.replace(notify, "notify:\n  slack-first: [approval, question]\n") + LADDER,
        encoding="utf-8",
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SIGNOFF_SECRET_SLACK_BOT", "xoxb-local")
        env.setenv("SIGNOFF_SECRET_SLACK_SIGNING", "s" * 32)
        with running_stack(root) as local:
            yield local


@pytest.fixture
def http(stack: LocalStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=60.0) as client:
        yield client


def posted(slack: FakeSlack, channel: str) -> list[dict[str, Any]]:
    return [message for message in list(slack.messages) if message["channel"] == channel]


def sweep(http: httpx.Client, advance: float) -> dict[str, Any]:
    done = http.post("/_local/sweep", json={"advance": advance})
    assert done.status_code == 200, done.text
    report: dict[str, Any] = done.json()
    return report


def sink_messages(http: httpx.Client, pending_id: str) -> list[dict[str, Any]]:
    return [
        received["notification"]
        for received in http.get("/_local/notifications").json()["notifications"]
        if received["notification"].get("pendingId") == pending_id
    ]


def test_an_item_escalates_through_two_channels_and_is_denied_at_the_end(
    stack: LocalStack, http: httpx.Client, slack: FakeSlack
) -> None:
    paused = http.post(MESSAGES, json={"message": REFUND})
    assert paused.status_code == 202, paused.text
    pending = paused.json()
    pid = pending["id"]
    first = eventually(lambda: posted(slack, "C-FIRST"), "the approval in the first channel")
    assert sweep(http, 30 * 60 - 60)["escalated"] == [], "not before the first step's time"

    # step 1: the webhook gets the decision card, the first Slack message is redrawn
    assert sweep(http, 60)["escalated"] == [f"escalate:{pid}:1"]
    step1 = eventually(lambda: sink_messages(http, pid), "step 1's webhook message")[0]
    assert (step1["kind"], step1["escalationStep"], step1["escalatedTo"]) == (
        "approval",
        1,
        ["local-webhook"],
    )
    assert step1["approveUrl"] and step1["denyUrl"], "the escalated channel may decide"
    redrawn = eventually(
        lambda: [u for u in list(slack.updates) if u["ts"] == first[0]["ts"]],
        "the first message's update",
    )
    assert "Escalated" in str(redrawn[-1]["blocks"]) and "local-webhook" in str(redrawn[-1])
    assert any(block.get("type") == "actions" for block in redrawn[-1]["blocks"]), (
        "its buttons stay: the first channel may still decide"
    )
    status = http.get(pending["statusUrl"]).json()
    escalation = status["pending"]["escalation"]
    assert (escalation["step"], escalation["steps"], escalation["to"], escalation["asked"]) == (
        1,
        3,
        ["local-webhook"],
        ["local-webhook"],
    )
    assert escalation["line"].startswith("Escalated to local-webhook")
    assert escalation["line"].endswith("(step 1 of 3)")

    # step 2: the on-call Slack channel
    assert sweep(http, 90 * 60)["escalated"] == [f"escalate:{pid}:2"]
    oncall = eventually(lambda: posted(slack, "C-ONCALL"), "step 2's Slack message")
    assert "Escalated" in str(oncall[0]["blocks"])
    eventually(
        lambda: any(
            u["ts"] == first[0]["ts"] and "slack-oncall" in str(u) for u in list(slack.updates)
        ),
        "the first message redrawn for step 2",
    )

    # the end: denied by the escalation policy, the turn resumes and finishes
    last = sweep(http, 6 * HOUR)
    assert last["escalated"] == [f"{pid}:denied"] and last["resumed"] == [pid]
    done = finished(http, pending)
    assert [
        (d["pendingId"], d["decision"], d["actor"], d["channel"]) for d in done["decisions"]
    ] == [(pid, "denied", "sweeper", "escalation")]
    assert (
        done["decisions"][0]["note"] == "escalation policy: denied after 8 hours without a decision"
    )

    # exactly one message per channel per step, nothing after the end
    assert sweep(http, HOUR)["escalated"] == []
    assert len(posted(slack, "C-FIRST")) == 1 and len(posted(slack, "C-ONCALL")) == 1
    assert len(sink_messages(http, pid)) == 1
    markers = {m["metadata"]["event_payload"]["idempotency_key"] for m in list(slack.messages)}
    run = step1.get("runId")
    assert markers == {f"{run}:{pid}:slack-first", f"{run}:escalate:{pid}:2:slack-oncall"}


def test_the_sweep_route_refuses_a_clock_moving_back(http: httpx.Client) -> None:
    refused = http.post("/_local/sweep", json={"advance": -1})
    assert refused.status_code == 400
    assert refused.json()["error"] == "bad_request"
