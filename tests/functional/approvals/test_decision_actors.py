"""Who decided, through which channel: per-recipient email links, email approvers, API keys,
and the 410 of an item whose time ran out — the handlers on moto, mail through moto's SES."""

from __future__ import annotations

import re
import shutil
import time
from html import unescape
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import boto3
import pytest
import yaml
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from signoff.keys.api_keys import new_api_key
from signoff.store import keys
from tests.conftest import ROOT
from tests.support.lambdas import (
    FakeLambdaContext,
    Lambdas,
    body,
    import_handler,
    imported_lambdas,
    load_event,
    queued_batch,
)

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.aws import AwsResources

ALICE, BOB = "alice@example.com", "bob@example.com"


@pytest.fixture
def deployment(aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Lambdas:
    """customer-service mails approvals to alice and bob through ``mail``; alice approves."""
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    mail = {"type": "email", "to": [ALICE, BOB], "from": "signoff@example.com"}
    mail["approvers"] = [ALICE]
    (agents / "channels.yaml").write_text(yaml.safe_dump({"channels": {"mail": mail}}))
    config = yaml.safe_load((agents / "customer-service" / "agent.yaml").read_text())
    config["notify"] = {"mail": ["approval"]}
    (agents / "customer-service" / "agent.yaml").write_text(yaml.safe_dump(config))
    boto3.client("sesv2").create_email_identity(EmailIdentity="signoff@example.com")
    for name, value in {
        "SIGNOFF_AGENTS_DIR": str(agents),
        "SIGNOFF_ENVIRONMENT": "production",
        "SIGNOFF_ALLOW_ANONYMOUS": "true",
        "SIGNOFF_PUBLIC_URL": "https://api.example.com",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    return imported_lambdas(aws)


def pause(lambdas: Lambdas) -> dict[str, Any]:
    response = lambdas.invoke("message", load_event("message_post"))
    assert response["statusCode"] == 202, response["body"]
    return body(response)


def mail_links(lambdas: Lambdas) -> dict[str, str]:
    """Deliver what the pause queued, and return each recipient's link token by address."""
    batch = queued_batch(lambdas.resources)
    result = import_handler("notifier").handler(batch, FakeLambdaContext())
    assert result["batchItemFailures"] == []
    links: dict[str, str] = {}
    for sent in ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages:
        (address,) = sent.destinations["ToAddresses"]
        (token,) = set(re.findall(r'href="[^"]*/a/([^"]+)"', unescape(sent.body)))
        links[address] = unquote(token)
    return links


def test_each_recipient_gets_their_own_link_and_only_an_approver_decides(
    deployment: Lambdas,
) -> None:
    paused = pause(deployment)
    links = mail_links(deployment)

    assert set(links) == {ALICE, BOB}, "one message per recipient"
    assert links[ALICE] != links[BOB]
    bob = deployment.invoke("resolve", load_event("link_post", TOKEN=links[BOB]))
    assert bob["statusCode"] == 403, "bob is mailed but is no approver"
    assert deployment.api.pending.get(paused["id"]).status == "pending"
    audit = deployment.api.turns.audit.for_subject(paused["sessionId"])
    assert [(a.kind, a.actor, a.channel) for a in audit if a.kind == "refusal"] == [
        ("refusal", BOB, "mail")
    ]

    alice = deployment.invoke("resolve", load_event("link_post", TOKEN=links[ALICE]))

    assert alice["statusCode"] == 200, alice["body"]
    assert f"Approved by {ALICE} through the mail channel" in alice["body"]
    item = deployment.api.pending.get(paused["id"])
    assert (item.status, item.resolved_by, item.resolved_via) == ("approved", ALICE, "mail")
    status = deployment.invoke(
        "resolve", load_event("session_status", SESSION_ID=paused["sessionId"])
    )
    decisions = body(status)["decisions"]
    assert [(d["decision"], d["actor"], d["channel"], d["pendingId"]) for d in decisions] == [
        ("approved", ALICE, "mail", paused["id"])
    ]
    assert decisions[0]["at"].endswith("Z")


def test_an_api_decision_names_the_key_and_its_tenant(deployment: Lambdas) -> None:
    clear, key = new_api_key("default", "ops console", time.time())
    deployment.api.api_keys.add(key)
    paused = pause(deployment)

    approved = deployment.invoke(
        "resolve", load_event("approval_approve", PENDING_ID=paused["id"], API_KEY=clear)
    )

    assert approved["statusCode"] == 200, approved["body"]
    item = deployment.api.pending.get(paused["id"])
    assert (item.resolved_by, item.resolved_via) == (f"apikey:{key.key_id}@default", "api")
    entries = deployment.api.turns.audit.for_subject(paused["sessionId"])
    assert [(e.kind, e.actor, e.channel) for e in entries if e.kind == "human"] == [
        ("human", f"apikey:{key.key_id}@default", "api")
    ]


def test_a_410_reports_the_item_expired_before_any_sweep(deployment: Lambdas) -> None:
    paused = pause(deployment)
    item = deployment.api.pending.get(paused["id"])
    token = deployment.api.signer.issue(
        item.id, "decide", item.tenant, item.args, time.time() + 3600
    )
    pk, sk = keys.pending_key(paused["id"])
    # its time ran out a minute ago; no sweep has marked it
    boto3.client("dynamodb").update_item(
        TableName=deployment.resources.environment["SIGNOFF_TABLE"],
        Key={"pk": {"S": pk}, "sk": {"S": sk}},
        UpdateExpression="SET expires_at = :past",
        ExpressionAttributeValues={":past": {"N": str(time.time() - 60)}},
    )

    late = deployment.invoke("resolve", load_event("approval_approve", PENDING_ID=paused["id"]))
    page = deployment.invoke("resolve", load_event("link_post", TOKEN=token))

    assert late["statusCode"] == 410
    assert body(late)["current"]["status"] == "expired"
    assert page["statusCode"] == 410 and "expired" in page["body"]
    assert deployment.api.pending.get(paused["id"]).status == "pending", "nothing was written"
