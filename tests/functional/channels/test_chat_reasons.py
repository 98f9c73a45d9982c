"""A Slack Deny carries the reason typed in the message beside the buttons (Slack sends
every input's state with a click): through the resolve handler on moto, with the channel
binding of ``test_chat_binding`` — only the channel's own approver decides, reason or not."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any
from urllib.parse import parse_qs, urlencode

from tests.functional.channels.test_chat_binding import SIGNING, Deployment
from tests.functional.channels.test_chat_binding import deployment as deployment
from tests.support.lambdas import FakeLambdaContext, load_event

WHY = "refund only 30, the item was used"


def click(
    deployment: Deployment, pending_id: str, *, action: str, reason: str | None, user: str = "UB"
) -> dict[str, Any]:
    """A signed Slack click on ``action`` in slack-b's channel, with ``reason`` typed."""
    event = load_event("slack_interaction", PENDING_ID=pending_id)
    payload = json.loads(parse_qs(event["body"])["payload"][0])
    payload["user"]["id"] = user
    payload["channel"]["id"] = payload["container"]["channel_id"] = "C0BBB"
    payload["actions"][0]["action_id"] = action
    if reason is not None:
        typed = {"type": "plain_text_input", "value": reason}
        payload["state"] = {"values": {"signoff_reason": {"reason": typed}}}
    raw = urlencode({"payload": json.dumps(payload)})
    timestamp = str(int(time.time()))
    base = f"v0:{timestamp}:{raw}".encode()
    event["body"] = raw
    event["headers"].update(
        {
            "x-slack-request-timestamp": timestamp,
            "x-slack-signature": "v0="
            + hmac.new(SIGNING.encode(), base, hashlib.sha256).hexdigest(),
            "content-length": str(len(raw)),
        }
    )
    response: dict[str, Any] = deployment.resolve.handler(event, FakeLambdaContext())
    return response


def test_a_slack_deny_carries_the_typed_reason_to_the_model(deployment: Deployment) -> None:
    paused = deployment.pause("acme", "customer-service")
    response = click(deployment, paused["id"], action="signoff_deny", reason=f"  {WHY} ")
    assert response["statusCode"] == 200, response["body"]
    item = deployment.item(paused["id"])
    assert (item.status, item.resolved_by, item.note) == ("denied", "UB", WHY)
    # the click only decides; the continuation resumes the turn, where the model reads it
    resumed = deployment.resolve.API.turns.proceed(paused["sessionId"])
    [result] = [
        e for e in resumed.events if e["type"] == "tool:result" and e["tool"] == "issue_refund"
    ]
    assert result["statusText"] == "Denied." and WHY in result["detailText"]


def test_a_slack_approve_ignores_the_reason_field(deployment: Deployment) -> None:
    paused = deployment.pause("acme", "customer-service")
    response = click(deployment, paused["id"], action="signoff_approve", reason=WHY)
    assert response["statusCode"] == 200, response["body"]
    item = deployment.item(paused["id"])
    assert (item.status, item.note) == ("approved", None)


def test_a_reason_from_another_channels_approver_decides_nothing(
    deployment: Deployment,
) -> None:
    paused = deployment.pause("acme", "customer-service")
    response = click(deployment, paused["id"], action="signoff_deny", reason=WHY, user="UA")
    assert response["statusCode"] == 200
    assert deployment.item(paused["id"]).status == "pending"


def test_a_reason_too_long_is_refused(deployment: Deployment) -> None:
    paused = deployment.pause("acme", "customer-service")
    response = click(deployment, paused["id"], action="signoff_deny", reason="x" * 2001)
    assert response["statusCode"] == 400
    assert deployment.item(paused["id"]).status == "pending"
