"""Deny with a reason and approve with changes through the handlers (on moto): the API's
bodies, the link page's form, and the attacks (a view link, a token bound to other arguments,
a tool that takes no changes, changes the schema refuses, a reason too long)."""

from __future__ import annotations

import dataclasses
import time
from html import unescape
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.functional.api.test_handlers import link_token, pause_refund, with_body
from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas

pytestmark = pytest.mark.usefixtures("lambdas")

WHY = "refund only 30, the item was used"
MAX_REASON_CHARS = 2000  # signoff.approver.edits.MAX_REASON_CHARS, the documented bound


def refund_events(result: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in result["events"] if e["type"] == kind and e["tool"] == "issue_refund"]


def human_audit(lambdas: Lambdas, session_id: str) -> list[tuple[str, str, str]]:
    entries = lambdas.api.turns.audit.for_subject(session_id)
    return [(a.decision, a.channel or "", a.reason) for a in entries if a.kind == "human"]


def approve(lambdas: Lambdas, pending_id: str, payload: Any, **headers: str) -> dict[str, Any]:
    event = with_body(load_event("approval_approve", PENDING_ID=pending_id), payload)
    event["headers"].update(headers)
    return lambdas.invoke("resolve", event)


def form_post(token: str, fields: dict[str, str]) -> dict[str, Any]:
    event = load_event("link_post", TOKEN=token)
    event["body"] = urlencode({"token": token, **fields})
    return event


def test_a_deny_reason_through_the_api_reaches_result_and_audit(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    event = with_body(load_event("approval_deny", PENDING_ID=paused["id"]), {"reason": WHY})
    done = lambdas.invoke("resolve", event)
    assert done["statusCode"] == 200, done["body"]
    result = body(done)
    assert result["stopReason"] == "denied"
    [denied] = refund_events(result, "tool:result")
    assert denied["statusText"] == "Denied." and WHY in denied["detailText"]
    assert human_audit(lambdas, paused["sessionId"]) == [("denied", "api", WHY)]


def test_a_reason_too_long_is_400_and_decides_nothing(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    long = {"reason": "x" * (MAX_REASON_CHARS + 1)}
    event = with_body(load_event("approval_deny", PENDING_ID=paused["id"]), long)
    refused = lambdas.invoke("resolve", event)
    assert refused["statusCode"] == 400 and "reason" in body(refused)["detail"]
    token = link_token(lambdas, paused["id"])
    page = lambdas.invoke("resolve", form_post(token, {"decision": "deny", **long}))
    assert page["statusCode"] == 400 and "reason" in unescape(page["body"])
    assert lambdas.api.pending.get(paused["id"]).status == "pending"


def test_approve_with_changes_through_the_api(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    done = approve(lambdas, paused["id"], {"args": {"amount": 30}})
    assert done["statusCode"] == 200, done["body"]
    result = body(done)
    assert result["text"] == "Refunded 30.0 USD for order A-1001 to the original payment method."
    [started] = refund_events(result, "tool:started")
    assert started["args"]["amount"] == 30.0 and started["originalArgs"]["amount"] == 42.0
    assert human_audit(lambdas, paused["sessionId"]) == [
        ("approved", "api", "approved with changes: amount 42 → 30")
    ]


@pytest.mark.parametrize(
    ("changes", "error", "fields"),
    [
        ({"amount": -1}, "invalid_changes", ["amount"]),
        ({"amount": 30, "coupon": "X"}, "invalid_changes", ["coupon"]),
    ],
)
def test_changes_the_schema_refuses_are_422_naming_the_field(
    lambdas: Lambdas, changes: dict[str, Any], error: str, fields: list[str]
) -> None:
    paused = pause_refund(lambdas)
    refused = approve(lambdas, paused["id"], {"args": changes})
    assert refused["statusCode"] == 422, refused["body"]
    answer = body(refused)
    assert (answer["error"], answer["fields"]) == (error, fields)
    assert all(field in answer["detail"] for field in fields)
    assert lambdas.api.pending.get(paused["id"]).status == "pending"
    assert human_audit(lambdas, paused["sessionId"]) == []


def test_a_token_bound_to_other_arguments_is_refused_whatever_the_changes(
    lambdas: Lambdas,
) -> None:
    paused = pause_refund(lambdas)
    item = lambdas.api.pending.get(paused["id"])
    # a token made for a call of 30 (not what the approver was shown) is not this item's
    other = {**item.args, "amount": 30}
    token = lambdas.api.signer.issue(item.id, "decide", item.tenant, other, time.time() + 60)
    refused = approve(lambdas, item.id, {"args": {"amount": 30}}, **{"x-signoff-token": token})
    assert refused["statusCode"] == 403
    page = lambdas.invoke("resolve", form_post(token, {"decision": "approve", "arg.amount": "30"}))
    assert page["statusCode"] == 403
    assert lambdas.api.pending.get(item.id).status == "pending"


def test_a_view_link_changes_nothing(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    item = lambdas.api.pending.get(paused["id"])
    view = lambdas.api.signer.issue(item.id, "view", item.tenant, item.args, time.time() + 60)
    shown = lambdas.invoke("resolve", load_event("link_get", TOKEN=view))
    assert shown["statusCode"] == 200 and 'name="arg.amount"' not in shown["body"]
    page = lambdas.invoke("resolve", form_post(view, {"decision": "approve", "arg.amount": "1"}))
    assert page["statusCode"] == 403
    refused = approve(lambdas, item.id, {"args": {"amount": 1}}, **{"x-signoff-token": view})
    assert refused["statusCode"] == 403
    assert lambdas.api.pending.get(item.id).status == "pending"


def test_the_link_page_offers_the_reason_and_the_editable_arguments(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    token = link_token(lambdas, paused["id"])
    page = lambdas.invoke("resolve", load_event("link_get", TOKEN=token))["body"]
    assert 'name="reason"' in page
    assert 'name="arg.amount" value="42"' in page and 'name="arg.orderId" value="A-1001"' in page


def test_the_link_form_approves_with_changes(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    token = link_token(lambdas, paused["id"])
    fields = {"decision": "approve", "arg.amount": "30", "arg.orderId": "A-1001", "reason": ""}
    posted = lambdas.invoke("resolve", form_post(token, fields))
    assert posted["statusCode"] == 200, posted["body"]
    assert lambdas.api.pending.get(paused["id"]).edited_args == {
        "orderId": "A-1001",
        "amount": 30.0,
    }
    assert human_audit(lambdas, paused["sessionId"]) == [
        ("approved", "link", "approved with changes: amount 42 → 30")
    ]


def test_the_link_form_denies_with_a_reason_and_ignores_changes(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    token = link_token(lambdas, paused["id"])
    fields = {"decision": "deny", "reason": WHY, "arg.amount": "30"}
    posted = lambdas.invoke("resolve", form_post(token, fields))
    assert posted["statusCode"] == 200, posted["body"]
    item = lambdas.api.pending.get(paused["id"])
    assert (item.status, item.note, item.edited_args) == ("denied", WHY, None)


def test_the_link_form_names_a_refused_change_and_the_link_still_works(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    token = link_token(lambdas, paused["id"])
    bad = lambdas.invoke("resolve", form_post(token, {"decision": "approve", "arg.amount": "-3"}))
    assert bad["statusCode"] == 422 and "amount" in unescape(bad["body"])
    good = lambdas.invoke("resolve", form_post(token, {"decision": "approve"}))
    assert good["statusCode"] == 200


def test_a_tool_not_declared_editable_refuses_changes_with_422(
    lambdas: Lambdas, monkeypatch: pytest.MonkeyPatch
) -> None:
    paused = pause_refund(lambdas)
    # the resolve function's agent, as if its tools.py declared issue_refund without editable
    for api in (lambdas.resolve.API.turns.catalog, lambdas.resolve.API.agents):
        agent = api.get("customer-service")
        fixed = dataclasses.replace(agent.tools["issue_refund"], editable=False)
        monkeypatch.setitem(agent.tools, "issue_refund", fixed)
    refused = approve(lambdas, paused["id"], {"args": {"amount": 30}})
    assert refused.get("statusCode") == 422, refused["body"]
    assert body(refused)["error"] == "not_editable"
    assert "issue_refund" in body(refused)["detail"]
    token = link_token(lambdas, paused["id"])
    page = lambdas.invoke("resolve", load_event("link_get", TOKEN=token))["body"]
    assert 'name="arg.amount"' not in page and 'name="reason"' in page
    posted = lambdas.invoke("resolve", form_post(token, {"decision": "approve", "arg.amount": "1"}))
    assert posted["statusCode"] == 422
    assert lambdas.api.pending.get(paused["id"]).status == "pending"


def test_a_reason_is_shown_escaped_on_the_decided_page(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    token = link_token(lambdas, paused["id"])
    hostile = "<script>alert(1)</script>"
    posted = lambdas.invoke("resolve", form_post(token, {"decision": "deny", "reason": hostile}))
    assert posted["statusCode"] == 200
    assert (
        hostile not in posted["body"] and "&lt;script&gt;alert(1)&lt;/script&gt;" in posted["body"]
    )
