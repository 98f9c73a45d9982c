"""Deny with a reason and approve with changes on the local stack, over HTTP: the API's
bodies and the link page's form, down to the item stored in the emulator's table."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.support.local_stack import REFUND, finished, notification_for, pending_item
from tests.support.local_stack import http as http
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    import httpx

    from signoff_dev.local.stack import LocalStack

WHY = "refund only 30, the item was used"


def pause(http: httpx.Client) -> dict[str, Any]:
    sent = http.post("/agents/customer-service/messages", json={"message": REFUND})
    assert sent.status_code == 202, sent.text
    paused: dict[str, Any] = sent.json()
    return paused


def refund_event(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    [event] = [e for e in events if e["type"] == kind and e.get("tool") == "issue_refund"]
    return event


def test_a_deny_reason_over_the_api_is_in_the_result_and_stored(
    stack: LocalStack, http: httpx.Client
) -> None:
    paused = pause(http)
    denied = http.post(f"/approvals/{paused['id']}/deny", json={"reason": WHY})
    assert denied.status_code == 200, denied.text
    assert denied.json()["stopReason"] == "denied"
    result = refund_event(denied.json()["events"], "tool:result")
    assert result["statusText"] == "Denied." and WHY in result["detailText"]
    stored = pending_item(stack, paused["id"])
    assert (stored["status"]["S"], stored["note"]["S"]) == ("denied", WHY)
    too_long = http.post(f"/approvals/{pause(http)['id']}/deny", json={"reason": "x" * 2001})
    assert too_long.status_code == 400 and "reason" in too_long.json()["detail"]


def test_approve_with_changes_over_the_api(stack: LocalStack, http: httpx.Client) -> None:
    paused = pause(http)
    refused = http.post(f"/approvals/{paused['id']}/approve", json={"args": {"amount": 0}})
    assert refused.status_code == 422
    assert refused.json()["error"] == "invalid_changes" and refused.json()["fields"] == ["amount"]
    assert pending_item(stack, paused["id"])["status"]["S"] == "pending"

    done = http.post(f"/approvals/{paused['id']}/approve", json={"args": {"amount": 30}})
    assert done.status_code == 200, done.text
    assert done.json()["text"].startswith("Refunded 30.0 USD for order A-1001")
    started = refund_event(done.json()["events"], "tool:started")
    assert started["args"]["amount"] == 30.0 and started["originalArgs"]["amount"] == 42.0
    assert "with changes: amount 42 → 30" in started["detailText"]
    stored = pending_item(stack, paused["id"])
    assert json.loads(stored["edited_args_json"]["S"]) == {"orderId": "A-1001", "amount": 30.0}


def test_the_link_form_approves_with_changes(stack: LocalStack, http: httpx.Client) -> None:
    paused = pause(http)
    link = notification_for(http, paused["id"])["notification"]["linkUrl"]
    page = http.get(link)
    assert page.status_code == 200
    assert 'name="arg.amount" value="42"' in page.text and 'name="reason"' in page.text
    token = link.rsplit("/", 1)[1]
    form = {"token": token, "decision": "approve", "arg.amount": "30", "arg.orderId": "A-1001"}
    approved = http.post(link, data=form, headers={"origin": stack.url})
    assert approved.status_code == 200, approved.text
    status = finished(http, paused)
    assert status["text"].startswith("Refunded 30.0 USD for order A-1001")


def test_the_link_form_denies_with_a_reason(stack: LocalStack, http: httpx.Client) -> None:
    paused = pause(http)
    link = notification_for(http, paused["id"])["notification"]["linkUrl"]
    form = {"token": link.rsplit("/", 1)[1], "decision": "deny", "reason": WHY}
    denied = http.post(link, data=form, headers={"origin": stack.url})
    assert denied.status_code == 200, denied.text
    status = finished(http, paused)
    assert WHY in refund_event(status["events"], "tool:result")["detailText"]
