"""Two-person approval through every entry point — the handlers on moto.

customer-service's production refunds need ``approvals: 2`` ``from: [finance-leads,
carol]`` (people.yaml: alice and bob are finance-leads; alice decides by email,
Slack and her API key, bob by email and Slack; dave is mailed but named nowhere).
A person counts once whatever channel they use, the vote that reaches the quorum
resumes the turn (the refund runs once), a deny stops it, and whoever the rule
does not name is refused and audited.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import time
from typing import TYPE_CHECKING, Any

import boto3
import httpx
import pytest
import yaml

from signoff.client import Client
from signoff.errors import Conflict
from signoff.keys.api_keys import new_api_key
from tests.conftest import ROOT
from tests.support.lambdas import Lambdas, body, deployed_at, imported_lambdas, load_event

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.aws import AwsResources

SIGNING = "slack-signing-secret-0123456789"
ALICE, BOB, CAROL, DAVE = (f"{n}@example.com" for n in ("alice", "bob", "carol", "dave"))
RULE = "refund-production-needs-approval"


class Deployment:
    def __init__(self, lambdas: Lambdas, alice_key: str) -> None:
        self.lambdas = lambdas
        self.alice_key = alice_key

    def pause(self) -> dict[str, Any]:
        response = self.lambdas.invoke("message", load_event("message_post"))
        assert response["statusCode"] == 202, response["body"]
        paused: dict[str, Any] = body(response)
        return paused

    def link(self, pending_id: str, recipient: str, decision: str = "approve") -> dict[str, Any]:
        """POST the link form of ``recipient``'s own link (as the email carried it)."""
        item = self.item(pending_id)
        token = self.lambdas.api.signer.issue(
            item.id, "decide", item.tenant, item.args, item.expires_at,
            recipient=recipient, channel="mail",
        )  # fmt: skip
        event = load_event("link_post", TOKEN=token)
        event["body"] = f"decision={decision}"
        event["isBase64Encoded"] = False
        event["headers"]["content-length"] = str(len(event["body"]))
        return self.lambdas.invoke("resolve", event)

    def slack(self, pending_id: str, user: str) -> str:
        """Click Approve in the Slack message as ``user``."""
        event = load_event("slack_interaction", PENDING_ID=pending_id)
        raw = event["body"].replace("U012ABC", user).replace("C0123", "C0FIN")
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
        response = self.lambdas.invoke("resolve", event)
        assert response["statusCode"] == 200, response["body"]
        return str(body(response)["text"])

    def item(self, pending_id: str) -> Any:
        return self.lambdas.api.pending.get(pending_id)

    def continue_turns(self) -> None:
        for session_id in self.lambdas.continuations.drain():
            self.lambdas.invoke("message", load_event("continue_turn", SESSION_ID=session_id))

    def status(self, paused: dict[str, Any]) -> dict[str, Any]:
        event = load_event("session_status", SESSION_ID=paused["sessionId"])
        status: dict[str, Any] = body(self.lambdas.invoke("resolve", event))
        return status

    def audit(self, session_id: str) -> list[Any]:
        return list(self.lambdas.api.turns.audit.for_subject(session_id))


def refunds_run(status: dict[str, Any]) -> int:
    """How many times the refund tool ran in the session (a denied call never starts)."""
    return sum(
        1
        for event in status["events"]
        if event["type"] == "tool:started" and event.get("tool") == "issue_refund"
    )


@pytest.fixture
def deployment(aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Deployment:
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    channels = {
        "mail": {"type": "email", "to": [ALICE, BOB, CAROL, DAVE], "from": "signoff@example.com"},
        "fin-slack": {
            "type": "slack",
            "channelId": "C0FIN",
            "botToken": {"secret": "slack-bot"},
            "signingSecret": {"secret": "slack-signing"},
            "approvers": ["U0ALICE", "U0BOB"],
            "baseUrl": "http://127.0.0.1:9",  # message updates fail; the decisions stand
        },
    }
    (agents / "channels.yaml").write_text(yaml.safe_dump({"channels": channels}))
    clear, key = new_api_key("default", "alice's console", time.time())
    people = {
        "people": {
            "alice": {"email": ALICE, "slack": "U0ALICE", "apiKeys": [key.key_id]},
            "bob": {"email": BOB, "slack": "U0BOB"},
            "carol": {"email": CAROL},
        },
        "groups": {"finance-leads": ["alice", "bob"]},
    }
    (agents / "people.yaml").write_text(yaml.safe_dump(people))
    rules_file = agents / "customer-service" / "actauth.yml"
    rules = yaml.safe_load(rules_file.read_text())
    [rule] = [r for r in rules["rules"] if r.get("name") == RULE]
    rule.update({"approvals": 2, "from": ["finance-leads", "carol"]})
    rules_file.write_text(yaml.safe_dump(rules))
    config = yaml.safe_load((agents / "customer-service" / "agent.yaml").read_text())
    config["notify"] = {"mail": ["approval"], "fin-slack": ["approval"]}
    (agents / "customer-service" / "agent.yaml").write_text(yaml.safe_dump(config))
    secrets = boto3.client("secretsmanager")
    for name, value in {"slack-bot": "xoxb-test", "slack-signing": SIGNING}.items():
        secrets.create_secret(Name=f"signoff/{name}", SecretString=value)
    deployed_at(monkeypatch, agents)
    lambdas = imported_lambdas(aws)
    lambdas.api.api_keys.add(key)
    return Deployment(lambdas, clear)


def test_the_same_person_approving_by_link_then_slack_counts_once(
    deployment: Deployment,
) -> None:
    paused = deployment.pause()

    page = deployment.link(paused["id"], ALICE)
    assert page["statusCode"] == 200, page["body"]
    assert "1 of 2 approvals — alice" in page["body"]
    text = deployment.slack(paused["id"], "U0ALICE")
    assert "You already approved this (1 of 2 approvals — alice)" in text
    again = deployment.link(paused["id"], ALICE)
    assert again["statusCode"] == 409 and "You already approved this" in again["body"]

    item = deployment.item(paused["id"])
    assert item.status == "pending"
    assert [(v.person, v.actor, v.channel) for v in item.votes] == [("alice", ALICE, "mail")]
    pending = deployment.status(paused)["pending"]
    assert pending["approvals"]["line"] == "1 of 2 approvals — alice"
    assert pending["approvals"]["needed"] == 2
    assert [v["person"] for v in pending["approvals"]["votes"]] == ["alice"]
    assert deployment.lambdas.continuations.drain() == [], "no vote short of it resumes"


def test_an_api_key_of_a_person_who_voted_gets_already_voted(deployment: Deployment) -> None:
    paused = deployment.pause()
    assert deployment.slack(paused["id"], "U0ALICE").startswith("Your vote is recorded")

    event = load_event("approval_approve", PENDING_ID=paused["id"], API_KEY=deployment.alice_key)
    refused = deployment.lambdas.invoke("resolve", event)

    assert refused["statusCode"] == 409
    assert body(refused)["error"] == "already_voted"
    assert body(refused)["person"] == "alice"
    assert body(refused)["resent"] is False, "the vote on record came through Slack"


def test_two_approvers_reach_the_quorum_and_the_turn_resumes_once(
    deployment: Deployment,
) -> None:
    paused = deployment.pause()

    first = deployment.link(paused["id"], CAROL)
    assert first["statusCode"] == 200 and "Vote recorded" in first["body"]
    text = deployment.slack(paused["id"], "U0BOB")
    deployment.continue_turns()

    item = deployment.item(paused["id"])
    assert (item.status, item.resolved_by, item.resolved_via) == ("approved", "U0BOB", "fin-slack")
    assert "Approved by U0BOB" in text and "(2 of 2 approvals — carol, bob)" in text
    status = deployment.status(paused)
    assert status["status"] == "done"
    assert refunds_run(status) == 1
    late = deployment.link(paused["id"], ALICE)
    assert late["statusCode"] == 409 and "Already decided" in late["body"]
    entries = deployment.audit(paused["sessionId"])
    human = [e for e in entries if e.kind == "human"]
    assert [e.kind for e in entries if e.kind in ("vote", "human")] == ["vote", "human"]
    assert "carol (approve, mail)" in human[0].reason
    assert "bob (approve, fin-slack)" in human[0].reason


def test_a_deny_by_either_stops_it(deployment: Deployment) -> None:
    paused = deployment.pause()
    deployment.link(paused["id"], ALICE)

    denied = deployment.link(paused["id"], BOB, "deny")

    assert denied["statusCode"] == 200, denied["body"]
    assert "1 of 2 approvals — alice; 1 of 1 denies — bob" in denied["body"]
    item = deployment.item(paused["id"])
    assert (item.status, item.resolved_by) == ("denied", BOB)
    status = deployment.status(paused)
    assert status["status"] == "done" and refunds_run(status) == 0


def test_a_person_the_rule_does_not_name_is_refused_and_audited(deployment: Deployment) -> None:
    paused = deployment.pause()

    refused = deployment.link(paused["id"], DAVE)

    assert refused["statusCode"] == 403
    assert "not one of the approvers this request names" in refused["body"]
    assert deployment.item(paused["id"]).votes == []
    refusals = [
        (e.actor, e.channel, e.reason)
        for e in deployment.audit(paused["sessionId"])
        if e.kind == "refusal"
    ]
    assert refusals == [(DAVE, "mail", "not one of the approvers this request names")]


def test_changes_need_a_single_approver(deployment: Deployment) -> None:
    paused = deployment.pause()
    event = load_event("approval_approve", PENDING_ID=paused["id"], API_KEY=deployment.alice_key)
    event["body"] = json.dumps({"args": {"amount": 30}})
    event["headers"]["content-length"] = str(len(event["body"]))

    refused = deployment.lambdas.invoke("resolve", event)

    assert refused["statusCode"] == 400
    assert "changes to its arguments need a single approver" in body(refused)["detail"]
    assert deployment.item(paused["id"]).votes == []


def test_votes_on_an_item_paused_before_a_rules_change_still_count_a_person_once(
    deployment: Deployment, aws: AwsResources, tmp_path: Path
) -> None:
    """The item keeps the quorum it paused with; a new deployment whose rules no longer
    count people still knows alice's email and Slack id are one person."""
    paused = deployment.pause()
    rules_file = tmp_path / "agents" / "customer-service" / "actauth.yml"
    rules = yaml.safe_load(rules_file.read_text())
    [rule] = [r for r in rules["rules"] if r.get("name") == RULE]
    del rule["approvals"], rule["from"]
    rules_file.write_text(yaml.safe_dump(rules))
    redeployed = Deployment(imported_lambdas(aws), deployment.alice_key)

    assert redeployed.link(paused["id"], ALICE)["statusCode"] == 200
    text = redeployed.slack(paused["id"], "U0ALICE")

    assert "You already approved this (1 of 2 approvals — alice)" in text
    item = redeployed.item(paused["id"])
    assert item.status == "pending" and [v.person for v in item.votes] == ["alice"]


class Handlers(httpx.BaseTransport):
    """The API's approve route as API Gateway calls the resolve handler; the first
    request is lost: dropped ``before`` it reaches the handler, or ``after`` the handler
    committed its decision (the connection reset before its answer arrived)."""

    def __init__(self, deployment: Deployment, *, drop: str) -> None:
        self.deployment, self.drop, self.sent = deployment, drop, 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        pending_id = request.url.path.split("/")[2]
        api_key = request.headers["x-api-key"]
        event = load_event("approval_approve", PENDING_ID=pending_id, API_KEY=api_key)
        event["body"] = request.content.decode()
        event["headers"]["content-length"] = str(len(event["body"]))
        if self.sent == 1 and self.drop == "before":
            raise httpx.ConnectError("connection refused", request=request)
        answer = self.deployment.lambdas.invoke("resolve", event)
        if self.sent == 1 and self.drop == "after":
            raise httpx.ReadError("connection reset by peer", request=request)
        return httpx.Response(answer["statusCode"], content=answer["body"].encode())


def client_over(deployment: Deployment, drop: str) -> tuple[Client, Handlers]:
    client = Client("https://api.example.com", api_key=deployment.alice_key)
    handlers = Handlers(deployment, drop=drop)
    client.http = httpx.Client(base_url=client.base_url, transport=handlers)
    return client, handlers


def test_a_vote_sent_again_after_its_answer_was_lost_is_the_first_attempt_taken(
    deployment: Deployment,
) -> None:
    paused = deployment.pause()
    client, handlers = client_over(deployment, drop="after")

    client.decide(f"/approvals/{paused['id']}/approve", {})

    assert handlers.sent == 2, "sent again once its answer was lost"
    item = deployment.item(paused["id"])
    assert item.status == "pending"
    assert [(v.person, v.channel) for v in item.votes] == [("alice", "api")]


def test_a_vote_the_person_cast_another_way_is_still_an_error_after_a_drop(
    deployment: Deployment,
) -> None:
    paused = deployment.pause()
    assert deployment.slack(paused["id"], "U0ALICE").startswith("Your vote is recorded")
    client, handlers = client_over(deployment, drop="before")

    with pytest.raises(Conflict, match="already_voted"):
        client.decide(f"/approvals/{paused['id']}/approve", {})

    assert handlers.sent == 2
    assert [v.channel for v in deployment.item(paused["id"]).votes] == ["fin-slack"]


@pytest.mark.parametrize("name", ["escalation", "expiry"])
def test_a_channel_named_like_the_sweepers_own_is_refused_before_anyone_is_asked(
    aws: AwsResources,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 24's reproduction: the ladder's channel named ``escalation`` (or ``expiry``)
    mails eve, whom the rule's ``from`` leaves out. The deployment refuses the file: no
    turn pauses, so no link reaches eve; the log names the file, field and line."""
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    mail = {"type": "email", "to": ["eve@example.com", BOB], "from": "signoff@example.com"}
    (agents / "channels.yaml").write_text(yaml.safe_dump({"channels": {name: mail}}))
    config = yaml.safe_load((agents / "customer-service" / "agent.yaml").read_text())
    config["notify"] = {name: ["approval"]}
    (agents / "customer-service" / "agent.yaml").write_text(yaml.safe_dump(config))
    deployed_at(monkeypatch, agents)

    response = imported_lambdas(aws).invoke("message", load_event("message_post"))

    assert response["statusCode"] == 500
    assert body(response)["error"] == "agent_misconfigured"
    [logged] = [
        str(getattr(r, "error", "")) for r in caplog.records if r.getMessage() == "request failed"
    ]
    assert f"channels.yaml: channels.{name}: '{name}' is reserved" in logged
    assert logged.endswith("(line 2, column 3)")
