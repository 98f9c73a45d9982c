"""The approvals inbox on the resolve handler (moto): ``/inbox``, its card, its exports.

A turn pauses on a refund (tenant ``default``); an API key of that tenant lists it,
a key of another tenant sees nothing of it; an inbox link opens its card and decides
as its approver through the channel ``inbox``; the history and its CSV/JSON exports
show that decision. Inbox tokens and resume tokens never stand in for each other.
"""

from __future__ import annotations

import csv
import io
import time
from typing import Any
from urllib.parse import urlencode

import pytest

from signoff.keys.api_keys import new_api_key
from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas

pytestmark = pytest.mark.usefixtures("lambdas")

ALICE = "alice@example.com"


def pause(lambdas: Lambdas) -> dict[str, Any]:
    response = lambdas.invoke("message", load_event("message_post"))
    assert response["statusCode"] == 202, response["body"]
    paused: dict[str, Any] = body(response)
    return paused


def key_of(lambdas: Lambdas, tenant: str) -> str:
    clear, record = new_api_key(tenant, "inbox test", time.time())
    lambdas.api.api_keys.add(record)
    return clear


def get(lambdas: Lambdas, name: str, *, key: str | None = None, **query: str) -> dict[str, Any]:
    event = load_event(name, **({"API_KEY": key} if key else {}))
    event["rawQueryString"] = urlencode(query)
    event["queryStringParameters"] = dict(query) or None
    return lambdas.invoke("resolve", event)


def card_event(name: str, pending_id: str, token: str) -> dict[str, Any]:
    return load_event(name, PENDING_ID=pending_id, INBOX_TOKEN=token)


def inbox_token(lambdas: Lambdas, tenant: str = "default", ttl: float = 3600) -> str:
    return str(lambdas.api.signer.issue_inbox(tenant, ALICE, time.time() + ttl))


def test_a_key_lists_its_tenants_pending_items_and_no_other_tenant_sees_them(
    lambdas: Lambdas,
) -> None:
    paused = pause(lambdas)
    mine, theirs = key_of(lambdas, "default"), key_of(lambdas, "globex")

    listed = get(lambdas, "inbox_get", key=mine)
    other = get(lambdas, "inbox_get", key=theirs)

    assert listed["statusCode"] == 200, listed["body"]
    items = body(listed)["items"]
    assert [item["pendingId"] for item in items] == [paused["id"]]
    row = items[0]
    assert row["tool"] == "issue_refund" and row["agent"] == "customer-service"
    assert row["ageSeconds"] >= 0 and row["summary"] and row["votes"] == []
    assert body(other) == {"tenant": "globex", "items": [], "next": None}
    # the other tenant's key does not open the item's card either
    card = load_event("inbox_card_get", PENDING_ID=paused["id"])
    card.pop("queryStringParameters")
    card["rawQueryString"] = ""
    card["headers"]["x-api-key"] = theirs
    assert lambdas.invoke("resolve", card)["statusCode"] == 404


def test_an_inbox_link_decides_as_its_approver_and_the_history_shows_it(
    lambdas: Lambdas,
) -> None:
    paused = pause(lambdas)
    token = inbox_token(lambdas)

    page = lambdas.invoke("resolve", card_event("inbox_card_get", paused["id"], token))
    assert page["statusCode"] == 200, page["body"]
    assert "<form" in page["body"] and "issue_refund" in page["body"]
    decided = lambdas.invoke("resolve", card_event("inbox_card_post", paused["id"], token))

    assert decided["statusCode"] == 200, decided["body"]
    item = lambdas.api.pending.get(paused["id"])
    assert (item.status, item.resolved_by, item.resolved_via) == ("approved", ALICE, "inbox")
    history = body(get(lambdas, "inbox_audit_json", token=token))["entries"]
    assert [(e["decision"], e["actor"], e["channel"], e["pendingId"]) for e in history] == [
        ("approved", ALICE, "inbox", paused["id"])
    ]
    exported = get(lambdas, "inbox_audit_csv", token=token)
    assert exported["headers"]["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported["body"])))
    stored = [
        e for e in lambdas.api.turns.audit.for_subject(paused["sessionId"]) if e.kind == "human"
    ]
    assert [(r["id"], r["actor"], r["channel"], r["decision"]) for r in rows] == [
        (e.id, e.actor, e.channel, e.decision) for e in stored
    ]
    assert body(get(lambdas, "inbox_get", token=token))["items"] == []


def test_an_inbox_link_of_another_tenant_neither_opens_nor_decides_the_item(
    lambdas: Lambdas,
) -> None:
    paused = pause(lambdas)
    token = inbox_token(lambdas, tenant="globex")

    shown = lambdas.invoke("resolve", card_event("inbox_card_get", paused["id"], token))
    posted = lambdas.invoke("resolve", card_event("inbox_card_post", paused["id"], token))

    assert (shown["statusCode"], posted["statusCode"]) == (404, 404)
    assert lambdas.api.pending.get(paused["id"]).status == "pending"


def test_an_inbox_token_is_no_decision_token_and_a_decision_token_opens_no_inbox(
    lambdas: Lambdas,
) -> None:
    paused = pause(lambdas)
    item = lambdas.api.pending.get(paused["id"])
    inbox = inbox_token(lambdas)
    resume = lambdas.api.signer.issue(item.id, "decide", item.tenant, item.args, time.time() + 60)

    link = load_event("link_post", TOKEN=inbox)
    link["body"] = urlencode({"decision": "approve", "token": inbox})
    link["headers"]["content-length"] = str(len(link["body"]))
    as_decision = lambdas.invoke("resolve", link)
    as_inbox = get(lambdas, "inbox_get", token=resume)
    as_card = lambdas.invoke("resolve", card_event("inbox_card_post", item.id, resume))

    assert as_decision["statusCode"] == 403, as_decision["body"]
    assert (as_inbox["statusCode"], as_card["statusCode"]) == (403, 403)
    assert lambdas.api.pending.get(item.id).status == "pending"


def test_an_expired_inbox_link_is_410_and_decides_nothing(lambdas: Lambdas) -> None:
    paused = pause(lambdas)
    token = inbox_token(lambdas, ttl=-1)

    listed = get(lambdas, "inbox_get", token=token)
    posted = lambdas.invoke("resolve", card_event("inbox_card_post", paused["id"], token))

    assert (listed["statusCode"], posted["statusCode"]) == (410, 410)
    assert lambdas.api.pending.get(paused["id"]).status == "pending"


def test_an_api_keys_card_is_read_only_and_its_form_post_is_refused(lambdas: Lambdas) -> None:
    paused = pause(lambdas)
    key = key_of(lambdas, "default")
    card = load_event("inbox_card_get", PENDING_ID=paused["id"])
    card.pop("queryStringParameters")
    card["rawQueryString"] = ""
    card["headers"]["x-api-key"] = key
    post = load_event("inbox_card_post", PENDING_ID=paused["id"])
    post.pop("queryStringParameters")
    post["rawQueryString"] = ""
    post["headers"]["x-api-key"] = key

    shown = lambdas.invoke("resolve", card)
    refused = lambdas.invoke("resolve", post)

    assert shown["statusCode"] == 200 and "<form" not in shown["body"]
    assert refused["statusCode"] == 403
    assert lambdas.api.pending.get(paused["id"]).status == "pending"
