"""The link and chat routes keep the deployment's one clock: a test clock drives them.

The resolve handler on moto with its ``Api.clock`` replaced by a ``ManualClock``:
a link's expiry and the window a signed Slack request's timestamp must fall in
move with that clock, not with the machine's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import shutil
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import boto3
import pytest
import yaml

from signoff.clock import ManualClock
from tests.conftest import ROOT
from tests.support.lambdas import FakeLambdaContext, Lambdas, body, import_handler, load_event
from tests.support.lambdas import lambdas as lambdas

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.aws import AwsResources

SIGNING = "slack-signing-secret-for-the-clock"
# Slack's replay window: a request signed more than five minutes off is refused.
WINDOW = 300


def with_clock(module: Any, clock: ManualClock) -> None:
    module.API = dataclasses.replace(module.API, clock=clock)


def paused_item(lambdas: Lambdas) -> Any:
    response = lambdas.invoke("message", load_event("message_post"))
    assert response["statusCode"] == 202, response["body"]
    return lambdas.api.pending.get(body(response)["id"])


def test_a_link_expires_when_the_deployments_clock_says_so(lambdas: Lambdas) -> None:
    clock = ManualClock(datetime.now(UTC))
    with_clock(lambdas.resolve, clock)
    item = paused_item(lambdas)
    expiry = clock.now().timestamp() + 60
    token = str(lambdas.api.signer.issue(item.id, "view", item.tenant, item.args, expiry))
    page = load_event("link_get", TOKEN=token)

    before = lambdas.invoke("resolve", page)
    clock.advance(61)
    after = lambdas.invoke("resolve", page)

    assert before["statusCode"] == 200, before["body"]
    assert after["statusCode"] == 410, "the link's time ran out on the deployment's clock"


def test_a_link_made_in_the_clocks_past_is_expired_at_once(lambdas: Lambdas) -> None:
    # The deployment's clock runs an hour ahead of the machine's: a link that expires
    # in half an hour of machine time has expired for the deployment.
    clock = ManualClock(datetime.now(UTC) + timedelta(hours=1))
    with_clock(lambdas.resolve, clock)
    item = paused_item(lambdas)
    token = str(
        lambdas.api.signer.issue(
            item.id, "approve", item.tenant, item.args, datetime.now(UTC).timestamp() + 1800
        )
    )

    page = lambdas.invoke("resolve", load_event("link_get", TOKEN=token))

    assert page["statusCode"] == 410


def test_a_token_given_to_the_api_expires_on_the_deployments_clock(lambdas: Lambdas) -> None:
    clock = ManualClock(datetime.now(UTC))
    with_clock(lambdas.resolve, clock)
    item = paused_item(lambdas)
    expiry = clock.now().timestamp() + 60
    token = str(lambdas.api.signer.issue(item.id, "approve", item.tenant, item.args, expiry))
    event = load_event("approval_approve", PENDING_ID=item.id)
    event["headers"]["x-signoff-token"] = token

    clock.advance(61)
    response = lambdas.invoke("resolve", event)

    assert response["statusCode"] == 410, response["body"]
    assert lambdas.api.pending.get(item.id).status == "pending"


@pytest.fixture
def resolve(aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The resolve function of a deployment with one Slack channel."""
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    channels = {
        "slack-ops": {
            "type": "slack",
            "channelId": "C0123",
            "botToken": {"secret": "slack-bot"},
            "signingSecret": {"secret": "slack-signing"},
            "baseUrl": "http://127.0.0.1:9",
        }
    }
    (agents / "channels.yaml").write_text(yaml.safe_dump({"channels": channels}))
    secrets = boto3.client("secretsmanager")
    for name, value in {"slack-bot": "xoxb-test", "slack-signing": SIGNING}.items():
        secrets.create_secret(Name=f"signoff/{name}", SecretString=value)
    monkeypatch.setenv("SIGNOFF_AGENTS_DIR", str(agents))
    monkeypatch.setenv("SIGNOFF_CHANNEL_SECRETS_PREFIX", "signoff/")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    return import_handler("resolve")


def slack_click(resolve: Any, signed_at: float) -> dict[str, Any]:
    """A click on an item that does not exist, signed at ``signed_at`` (epoch seconds)."""
    event = load_event("slack_interaction", PENDING_ID="pend_missing")
    raw = event["body"]
    timestamp = str(int(signed_at))
    base = f"v0:{timestamp}:{raw}".encode()
    signature = "v0=" + hmac.new(SIGNING.encode(), base, hashlib.sha256).hexdigest()
    event["headers"].update(
        {
            "x-slack-request-timestamp": timestamp,
            "x-slack-signature": signature,
            "content-length": str(len(raw)),
        }
    )
    result: dict[str, Any] = resolve.handler(event, FakeLambdaContext())
    return result


def test_slacks_replay_window_follows_the_deployments_clock(resolve: Any) -> None:
    # Two hours behind the machine: on the machine's clock every request here is stale.
    clock = ManualClock(datetime.now(UTC) - timedelta(hours=2))
    with_clock(resolve, clock)
    signed_at = clock.now().timestamp()

    fresh = slack_click(resolve, signed_at)
    clock.advance(WINDOW + 1)
    replayed = slack_click(resolve, signed_at)

    assert fresh["statusCode"] == 200, fresh["body"]
    assert "no longer exists" in body(fresh)["text"], "verified, then the item looked up"
    assert replayed["statusCode"] == 401, "outside the window on the deployment's clock"
