"""A chat click decides only items sent to its own channel, in their tenant, by that
channel's approvers (DESIGN.md §5.8) — the handlers on moto, two tenants, two Slack
channels on one Slack app and two Lark chats on one Lark app.

Tenant ``acme`` runs ``customer-service``, which sends approvals to ``slack-b`` and
``lark-b``; tenant ``globex`` runs ``refunds-desk``, which sends them by email only.
``slack-a`` (approvers ``UA``) and ``slack-b`` (approvers ``UB``) share one signing
secret, as two channels of one Slack app do; ``lark-a`` / ``lark-b`` share one
verification token.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import shutil
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
import pytest
import yaml

from signoff.keys.api_keys import new_api_key
from tests.conftest import ROOT
from tests.support.lambdas import FakeLambdaContext, body, deployed_at, import_handler, load_event

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.aws import AwsResources

SIGNING = "slack-signing-secret-0123456789"
LARK_TOKEN = "lark-verification-token"
SLACK = {"slack-a": ("C0AAA", "UA"), "slack-b": ("C0BBB", "UB")}
LARK = {"lark-a": ("oc_aaa", "ou_a"), "lark-b": ("oc_bbb", "ou_b")}


@dataclass
class Deployment:
    message: Any
    resolve: Any
    keys: dict[str, str]

    def pause(self, tenant: str, agent: str) -> dict[str, Any]:
        event = load_event("message_post", API_KEY=self.keys[tenant])
        event = json.loads(json.dumps(event).replace("customer-service", agent))
        response = self.message.handler(event, FakeLambdaContext())
        assert response["statusCode"] == 202, response["body"]
        return body(response)

    def slack(self, pending_id: str, *, user: str, chat: str) -> str:
        event = load_event("slack_interaction", PENDING_ID=pending_id)
        raw = event["body"].replace("U012ABC", user).replace("C0123", chat)
        timestamp = str(int(time.time()))
        base = f"v0:{timestamp}:{raw}".encode()
        signature = "v0=" + hmac.new(SIGNING.encode(), base, hashlib.sha256).hexdigest()
        event["body"] = raw
        event["headers"].update(
            {
                "x-slack-request-timestamp": timestamp,
                "x-slack-signature": signature,
                "content-length": str(len(raw)),
            }
        )
        response = self.resolve.handler(event, FakeLambdaContext())
        assert response["statusCode"] == 200, response["body"]
        return str(body(response)["text"])

    def lark(self, pending_id: str, *, user: str, chat: str) -> str:
        event = load_event("lark_callback", PENDING_ID=pending_id, LARK_TOKEN=LARK_TOKEN)
        event["body"] = event["body"].replace("ou_3c3b1a2f", user).replace("oc_ops", chat)
        event["headers"]["content-length"] = str(len(event["body"]))
        response = self.resolve.handler(event, FakeLambdaContext())
        assert response["statusCode"] == 200, response["body"]
        return str(body(response)["toast"]["content"])

    def item(self, pending_id: str) -> Any:
        return self.resolve.API.pending.get(pending_id)

    def refusals(self, session_id: str) -> list[tuple[str, str, str]]:
        entries = self.resolve.API.turns.audit.for_subject(session_id)
        return [(e.actor, e.channel, e.reason) for e in entries if e.kind == "refusal"]


@pytest.fixture
def deployment(aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Deployment:
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    shutil.copytree(agents / "customer-service", agents / "refunds-desk")
    channels: dict[str, Any] = {
        "mail": {"type": "email", "to": ["ops@example.com"], "from": "signoff@example.com"}
    }
    for name, (chat, approver) in SLACK.items():
        channels[name] = {
            "type": "slack",
            "channelId": chat,
            "botToken": {"secret": "slack-bot"},
            "signingSecret": {"secret": "slack-signing"},  # one app: one secret
            "approvers": [approver],
            "baseUrl": "http://127.0.0.1:9",  # the message updates fail; the decisions stand
        }
    for name, (chat, approver) in LARK.items():
        channels[name] = {
            "type": "lark",
            "chatId": chat,
            "appId": "cli_x",
            "appSecret": {"secret": "lark-app"},
            "verificationToken": {"secret": "lark-token"},
            "approvers": [approver],
            "baseUrl": "http://127.0.0.1:9",
        }
    (agents / "channels.yaml").write_text(yaml.safe_dump({"channels": channels}))
    for agent, notify in {
        "customer-service": {"slack-b": ["approval"], "lark-b": ["approval"]},
        "refunds-desk": {"mail": ["approval"]},
    }.items():
        config = yaml.safe_load((agents / agent / "agent.yaml").read_text())
        config["notify"] = notify
        (agents / agent / "agent.yaml").write_text(yaml.safe_dump(config))
    secrets = boto3.client("secretsmanager")
    for name, value in {
        "slack-bot": "xoxb-test",
        "slack-signing": SIGNING,
        "lark-app": "lark-app-secret",
        "lark-token": LARK_TOKEN,
    }.items():
        secrets.create_secret(Name=f"signoff/{name}", SecretString=value)
    deployed_at(monkeypatch, agents, anonymous=False)
    from signoff.continuations.memory import MemoryContinuations

    message, resolve = (import_handler(f) for f in ("message", "resolve"))
    continuations = MemoryContinuations()
    for module in (message, resolve):
        module.API = dataclasses.replace(module.API, continuations=continuations)
    keys = {}
    for tenant in ("acme", "globex"):
        clear, record = new_api_key(tenant, "test", time.time())
        resolve.API.api_keys.add(record)
        keys[tenant] = clear
    return Deployment(message, resolve, keys)


def test_a_slack_channels_own_approver_decides_an_item_sent_there(
    deployment: Deployment,
) -> None:
    acme = deployment.pause("acme", "customer-service")

    text = deployment.slack(acme["id"], user="UB", chat="C0BBB")

    item = deployment.item(acme["id"])
    assert (item.status, item.resolved_by, item.resolved_via) == ("approved", "UB", "slack-b")
    assert "Approved by UB through the slack-b channel at " in text


def test_another_slack_channels_approver_is_refused_and_audited(deployment: Deployment) -> None:
    acme = deployment.pause("acme", "customer-service")

    # UA approves for slack-a, clicking in slack-b's channel (same app, same secret)
    text = deployment.slack(acme["id"], user="UA", chat="C0BBB")

    assert deployment.item(acme["id"]).status == "pending"
    assert "not one of the approvers of slack-b" in text
    assert deployment.refusals(acme["sessionId"]) == [
        ("UA", "slack-b", "not one of the approvers of slack-b")
    ]


def test_a_slack_channel_cannot_decide_an_item_that_was_not_sent_to_it(
    deployment: Deployment,
) -> None:
    acme = deployment.pause("acme", "customer-service")
    globex = deployment.pause("globex", "refunds-desk")

    # from slack-a, by pending id: acme's item went to slack-b, globex's to no chat at all
    on_acme = deployment.slack(acme["id"], user="UA", chat="C0AAA")
    on_globex = deployment.slack(globex["id"], user="UA", chat="C0AAA")

    assert deployment.item(acme["id"]).status == "pending"
    assert deployment.item(globex["id"]).status == "pending"
    assert "slack-a is not notified" in on_acme and "slack-a is not notified" in on_globex
    assert [who for who, _, _ in deployment.refusals(acme["sessionId"])] == ["UA"]
    assert [(who, via) for who, via, _ in deployment.refusals(globex["sessionId"])] == [
        ("UA", "slack-a")
    ]


def test_a_lark_chats_own_approver_decides_and_nobody_else_does(deployment: Deployment) -> None:
    acme = deployment.pause("acme", "customer-service")
    globex = deployment.pause("globex", "refunds-desk")

    wrong_approver = deployment.lark(acme["id"], user="ou_a", chat="oc_bbb")
    wrong_chat = deployment.lark(acme["id"], user="ou_a", chat="oc_aaa")
    other_tenant = deployment.lark(globex["id"], user="ou_b", chat="oc_bbb")
    assert deployment.item(acme["id"]).status == "pending"
    assert deployment.item(globex["id"]).status == "pending"
    right = deployment.lark(acme["id"], user="ou_b", chat="oc_bbb")

    assert "not one of the approvers of lark-b" in wrong_approver
    assert "lark-a is not notified" in wrong_chat
    assert "not sent to lark-b" in other_tenant or "lark-b is not notified" in other_tenant
    item = deployment.item(acme["id"])
    assert (item.status, item.resolved_by, item.resolved_via) == ("approved", "ou_b", "lark-b")
    assert "Approved by ou_b through the lark-b channel at " in right
    assert [(who, via) for who, via, _ in deployment.refusals(acme["sessionId"])] == [
        ("ou_a", "lark-b"),
        ("ou_a", "lark-a"),
    ]
    assert [(who, via) for who, via, _ in deployment.refusals(globex["sessionId"])] == [
        ("ou_b", "lark-b")
    ]


def test_two_channels_two_tenants_only_own_approvers_decide_only_own_items(
    deployment: Deployment,
) -> None:
    """The acceptance case: every (clicker, chat, item) of both vendors; one decides each."""
    items = {
        "slack": deployment.pause("acme", "customer-service"),
        "lark": deployment.pause("acme", "customer-service"),
        "globex": deployment.pause("globex", "refunds-desk"),
    }
    attempts = [
        (deployment.slack, user, chat, name)
        for chat, user in SLACK.values()
        for name in ("slack", "globex")
    ] + [
        (deployment.lark, user, chat, name)
        for chat, user in LARK.values()
        for name in ("lark", "globex")
    ]
    # every cross combination first: none of them may decide anything
    for click, user, chat, name in attempts:
        if (user, name) in (("UB", "slack"), ("ou_b", "lark")):
            continue
        click(items[name]["id"], user=user, chat=chat)
    assert {name: deployment.item(p["id"]).status for name, p in items.items()} == {
        "slack": "pending",
        "lark": "pending",
        "globex": "pending",
    }
    deployment.slack(items["slack"]["id"], user="UB", chat="C0BBB")
    deployment.lark(items["lark"]["id"], user="ou_b", chat="oc_bbb")

    decided = {name: deployment.item(p["id"]) for name, p in items.items()}
    assert {name: (i.status, i.resolved_by, i.resolved_via) for name, i in decided.items()} == {
        "slack": ("approved", "UB", "slack-b"),
        "lark": ("approved", "ou_b", "lark-b"),
        "globex": ("pending", None, None),
    }
    # each refused click is in the audit of the item it tried, with its clicker
    refused = sum(len(deployment.refusals(p["sessionId"])) for p in items.values())
    assert refused == len(attempts) - 2
