"""Pause → outbox + SQS → notifier → channels → a click decides: the handlers on moto,
the channels against real HTTP servers on loopback (and moto's SES)."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlencode

import boto3
import pytest
import yaml
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends
from standardwebhooks import Webhook

from tests.conftest import ROOT
from tests.support.http_server import Recorded, RecordingServer, Reply
from tests.support.lambdas import (
    FakeLambdaContext,
    body,
    deployed_at,
    import_handler,
    load_event,
    queued_batch,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.support.aws import AwsResources

SLACK_SIGNING = "slack-signing-secret-0123456789"
LARK_TOKEN = "lark-verification-token"
WEBHOOK_KEY = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@dataclass
class Deployment:
    message: Any
    resolve: Any
    notifier: Any
    resources: AwsResources
    webhook: RecordingServer
    slack: RecordingServer
    lark: RecordingServer

    def pause(self) -> dict[str, Any]:
        response = self.message.handler(load_event("message_post"), FakeLambdaContext())
        assert response["statusCode"] == 202, response["body"]
        return body(response)

    def queued(self) -> dict[str, Any]:
        """The SQS batch the notifier would get: every message now on the queue."""
        return queued_batch(self.resources)

    def notify(self, batch: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self.notifier.handler(batch, FakeLambdaContext())
        return result


def sent_mail() -> list[Any]:
    return list(ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages)


def slack_ok(request: Recorded) -> Reply:
    if request.path.endswith("chat.update"):
        return Reply(json={"ok": True, "ts": request.json()["ts"], "channel": "C0123"})
    return Reply(json={"ok": True, "ts": "1764460800.000100", "channel": "C0123"})


def lark_ok(request: Recorded) -> Reply:
    if request.path.endswith("tenant_access_token/internal"):
        return Reply(json={"code": 0, "tenant_access_token": "t-abc", "expire": 7200})
    return Reply(json={"code": 0, "data": {"message_id": "om_x100b4d5f"}})


@pytest.fixture
def deployment(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Deployment]:
    with RecordingServer() as webhook, RecordingServer() as slack, RecordingServer() as lark:
        agents = tmp_path / "agents"
        shutil.copytree(ROOT / "agents", agents)
        channels = {
            "hooks": {
                "type": "webhook",
                "url": f"{webhook.url}/hook",
                "secret": {"secret": "hooks-key"},
                "allowPrivate": True,
            },
            "mail": {"type": "email", "to": ["ops@example.com"], "from": "signoff@example.com"},
            "team-slack": {
                "type": "slack",
                "channelId": "C0123",
                "botToken": {"secret": "slack-bot"},
                "signingSecret": {"secret": "slack-signing"},
                "approvers": ["U012ABC"],
                "baseUrl": slack.url,
            },
            "team-lark": {
                "type": "lark",
                "chatId": "oc_ops",
                "appId": "cli_x",
                "appSecret": {"secret": "lark-app"},
                "verificationToken": {"secret": "lark-token"},
                "baseUrl": lark.url,
            },
        }
        (agents / "channels.yaml").write_text(yaml.safe_dump({"channels": channels}))
        config = yaml.safe_load((agents / "customer-service" / "agent.yaml").read_text())
        config["notify"] = {name: ["approval", "question"] for name in channels}
        (agents / "customer-service" / "agent.yaml").write_text(yaml.safe_dump(config))
        secrets = boto3.client("secretsmanager")
        for name, value in {
            "hooks-key": WEBHOOK_KEY,
            "slack-bot": "xoxb-test",
            "slack-signing": SLACK_SIGNING,
            "lark-app": "lark-app-secret",
            "lark-token": LARK_TOKEN,
        }.items():
            secrets.create_secret(Name=f"signoff/{name}", SecretString=value)
        boto3.client("sesv2").create_email_identity(EmailIdentity="signoff@example.com")
        deployed_at(monkeypatch, agents)
        from signoff.continuations.memory import MemoryContinuations

        message, resolve, notifier = (import_handler(f) for f in ("message", "resolve", "notifier"))
        continuations = MemoryContinuations()
        import dataclasses

        for module in (message, resolve):
            module.API = dataclasses.replace(module.API, continuations=continuations)
        yield Deployment(message, resolve, notifier, aws, webhook, slack, lark)


def test_pause_notifies_every_channel_once_and_slack_retries_alone(deployment: Deployment) -> None:
    deployment.webhook.script([Reply(status=204)] * 5)
    deployment.slack.script(
        [
            Reply(status=503),
            Reply(
                status=429, headers={"Retry-After": "1"}, json={"ok": False, "error": "ratelimited"}
            ),
            slack_ok,
        ]
    )
    # each retry first looks for an earlier post's marker (internal_error may have posted)
    deployment.slack.script(
        [Reply(json={"ok": True, "messages": []})] * 2, path="/conversations.history"
    )
    deployment.lark.script([lark_ok] * 5)
    paused = deployment.pause()
    batch = deployment.queued()
    assert [json.loads(r["body"])["pendingId"] for r in batch["Records"]] == [paused["id"]]

    for attempt in range(3):
        result = deployment.notify(batch)
        failed = [f["itemIdentifier"] for f in result["batchItemFailures"]]
        assert failed == ([batch["Records"][0]["messageId"]] if attempt < 2 else []), attempt

    hooks = deployment.webhook.requests
    assert len(hooks) == 1, "the webhook was not re-sent"
    headers = {k: v for k, v in hooks[0].headers.items() if k.startswith("webhook-")}
    payload = Webhook(WEBHOOK_KEY).verify(hooks[0].body, headers)
    assert payload["kind"] == "approval" and payload["tool"] == "issue_refund"
    assert headers["webhook-id"].endswith(f":{paused['id']}:hooks")
    # the seed's key, as a receiver written to it dedupes on
    assert hooks[0].headers["idempotency-key"] == f"{payload['runId']}:{paused['id']}"
    assert payload["approveUrl"].startswith(
        f"https://api.example.com/approvals/{paused['id']}/approve?token="
    )
    assert len(sent_mail()) == 1, "the email was not re-sent"
    posts = [r for r in deployment.slack.requests if r.path.endswith("chat.postMessage")]
    assert len(posts) == 3 and posts[-1].headers["authorization"] == "Bearer xoxb-test"
    lookups = [r for r in deployment.slack.requests if r.path.endswith("conversations.history")]
    assert len(lookups) == 2
    assert len([r for r in deployment.lark.requests if r.path.endswith("/messages")]) == 1
    # everything recorded: a fourth delivery sends nothing
    assert deployment.notify(batch)["batchItemFailures"] == []
    assert len(deployment.webhook.requests) == 1 and len(sent_mail()) == 1


def signed_slack_click(
    deployment: Deployment, pending_id: str, *, user: str = "U012ABC", age: float = 0
) -> dict[str, Any]:
    event = load_event("slack_interaction", PENDING_ID=pending_id)
    raw = event["body"].replace("U012ABC", user)
    timestamp = str(int(time.time() - age))
    signature = (
        "v0="
        + hmac.new(
            SLACK_SIGNING.encode(), f"v0:{timestamp}:{raw}".encode(), hashlib.sha256
        ).hexdigest()
    )
    event["body"] = raw
    event["headers"].update(
        {
            "x-slack-request-timestamp": timestamp,
            "x-slack-signature": signature,
            "content-length": str(len(raw)),
        }
    )
    return event


def test_a_signed_slack_click_decides_updates_the_message_and_continues(
    deployment: Deployment,
) -> None:
    deployment.slack.script([slack_ok] * 5)
    paused = deployment.pause()
    response = deployment.resolve.handler(
        signed_slack_click(deployment, paused["id"]), FakeLambdaContext()
    )
    assert response["statusCode"] == 200
    assert "Approved by U012ABC through the team-slack channel at " in body(response)["text"]
    item = deployment.resolve.API.pending.get(paused["id"])
    assert (item.status, item.resolved_by, item.resolved_via, item.resumed) == (
        "approved",
        "U012ABC",
        "team-slack",
        False,
    )
    update = next(r for r in deployment.slack.requests if r.path.endswith("chat.update"))
    assert update.json()["ts"] == "1764460800.000100" and "Approved by U012ABC" in json.dumps(
        update.json()
    )
    assert "signoff_approve" not in json.dumps(update.json()), "no buttons left"
    # the turn goes on in a fresh invocation, not inside the acknowledgement
    assert deployment.resolve.API.continuations.drain() == [paused["sessionId"]]
    done = deployment.message.handler(
        load_event("continue_turn", SESSION_ID=paused["sessionId"]), FakeLambdaContext()
    )
    assert done["status"] == "finished"
    # a second click: the current state, no second resume
    again = deployment.resolve.handler(
        signed_slack_click(deployment, paused["id"]), FakeLambdaContext()
    )
    assert body(again)["text"].startswith(
        "Already decided: Approved by U012ABC through the team-slack channel at "
    )
    assert deployment.resolve.API.continuations.drain() == []


@pytest.mark.parametrize("tamper", ["signature", "old", "garbage-timestamp", "garbage-body"])
def test_an_unverified_slack_request_is_401_and_changes_nothing(
    deployment: Deployment, tamper: str
) -> None:
    paused = deployment.pause()
    event = signed_slack_click(deployment, paused["id"], age=301 if tamper == "old" else 0)
    if tamper == "signature":
        event["headers"]["x-slack-signature"] = "v0=" + "0" * 64
    if tamper == "garbage-timestamp":
        event["headers"]["x-slack-request-timestamp"] = "not-a-number"
    if tamper == "garbage-body":
        event["body"] = "%%%"
    response = deployment.resolve.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 401
    assert deployment.resolve.API.pending.get(paused["id"]).status == "pending"


def test_someone_not_an_approver_is_refused_and_audited(deployment: Deployment) -> None:
    deployment.slack.script([slack_ok] * 5)
    paused = deployment.pause()
    response = deployment.resolve.handler(
        signed_slack_click(deployment, paused["id"], user="U999"), FakeLambdaContext()
    )
    assert response["statusCode"] == 200 and "not one of the approvers" in body(response)["text"]
    assert deployment.resolve.API.pending.get(paused["id"]).status == "pending"
    audit = deployment.resolve.API.turns.audit.for_subject(paused["sessionId"])
    assert [(a.kind, a.actor, a.channel) for a in audit if a.kind == "refusal"] == [
        ("refusal", "U999", "team-slack")
    ]


def lark_click(pending_id: str, token: str = LARK_TOKEN) -> dict[str, Any]:
    return load_event("lark_callback", PENDING_ID=pending_id, LARK_TOKEN=token)


def test_lark_challenge_click_and_second_click(deployment: Deployment) -> None:
    deployment.lark.script([lark_ok] * 5)
    challenge = load_event("lark_callback")
    challenge["body"] = json.dumps(
        {"type": "url_verification", "challenge": "c-123", "token": LARK_TOKEN}
    )
    answered = deployment.resolve.handler(challenge, FakeLambdaContext())
    assert answered["statusCode"] == 200 and body(answered) == {"challenge": "c-123"}
    paused = deployment.pause()
    bad = deployment.resolve.handler(lark_click(paused["id"], token="wrong"), FakeLambdaContext())
    assert bad["statusCode"] == 401
    first = deployment.resolve.handler(lark_click(paused["id"]), FakeLambdaContext())
    assert first["statusCode"] == 200 and "Approved by" in body(first)["toast"]["content"]
    patch = [r for r in deployment.lark.requests if r.method == "PATCH"]
    assert patch and patch[0].path.endswith("/open-apis/im/v1/messages/om_x100b4d5f")
    second = deployment.resolve.handler(lark_click(paused["id"]), FakeLambdaContext())
    assert body(second)["toast"]["content"].startswith("Already decided: Approved by ")
    assert deployment.resolve.API.continuations.drain() == [paused["sessionId"]]


def test_a_question_in_a_chat_with_approvers_links_only_a_page_that_cannot_answer(
    deployment: Deployment,
) -> None:
    # team-slack lists approvers, team-lark does not (anyone in its chat decides)
    deployment.webhook.script([Reply(status=204)] * 2)
    deployment.slack.script([slack_ok] * 2)
    deployment.lark.script([lark_ok] * 3)
    event = load_event("message_post")
    event["body"] = json.dumps({"message": "I want my money back"})
    asked = body(deployment.message.handler(event, FakeLambdaContext()))
    assert asked["type"] == "question"
    assert deployment.notify(deployment.queued())["batchItemFailures"] == []

    post = next(r for r in deployment.slack.requests if r.path.endswith("chat.postMessage"))
    assert "token=" not in post.text() and "/answer?" not in post.text()
    buttons = post.json()["blocks"][-1]["elements"]
    assert [b["text"]["text"] for b in buttons] == ["A-1001", "A-1002", "View in browser"]
    link = buttons[-1]["url"]
    assert link.startswith("https://api.example.com/a/")
    token = unquote(link.rsplit("/a/", 1)[1])
    page = deployment.resolve.handler(load_event("link_get", TOKEN=token), FakeLambdaContext())
    assert page["statusCode"] == 200 and "<form" not in page["body"]
    answer = load_event("link_post", TOKEN=token)
    answer["body"] = urlencode({"decision": "answer", "answer": "A-1002", "token": token})
    answer["headers"]["content-length"] = str(len(answer["body"]))
    refused = deployment.resolve.handler(answer, FakeLambdaContext())
    assert refused["statusCode"] == 403
    assert deployment.resolve.API.pending.get(asked["id"]).status == "pending"

    sent = next(r for r in deployment.lark.requests if r.path.endswith("/messages"))
    card = sent.json()["content"]
    assert f"https://api.example.com/questions/{asked['id']}/answer?token=" in card
    hook = json.loads(deployment.webhook.requests[0].body)
    assert hook["answerUrl"].startswith(f"https://api.example.com/questions/{asked['id']}/answer")
