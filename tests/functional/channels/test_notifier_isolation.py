"""The notifier function on moto: a channel that cannot be built fails alone, and is
logged and counted even when another channel of the same notification retries.

``customer-service`` notifies a webhook (a loopback server that first answers 503)
and a ``database`` channel whose library, psycopg, cannot be imported (as in the
deployed engine layer without the ``signoff[database]`` extra).
"""

from __future__ import annotations

import json
import shutil
import sys
from typing import TYPE_CHECKING

import boto3
import yaml

from tests.conftest import ROOT
from tests.support.http_server import RecordingServer, Reply
from tests.support.lambdas import (
    FakeLambdaContext,
    body,
    deployed_at,
    import_handler,
    load_event,
    queued_batch,
)

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from tests.support.aws import AwsResources

WEBHOOK_KEY = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def test_the_database_row_fails_logged_and_counted_while_the_webhook_retries_alone(
    aws: AwsResources,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # the library is not installed
    with RecordingServer() as webhook:
        agents = tmp_path / "agents"
        shutil.copytree(ROOT / "agents", agents)
        channels = {
            "hooks": {
                "type": "webhook",
                "url": f"{webhook.url}/hook",
                "secret": {"secret": "hooks-key"},
                "allowPrivate": True,
            },
            "db": {"type": "database", "dsn": {"secret": "db-dsn"}},
        }
        (agents / "channels.yaml").write_text(yaml.safe_dump({"channels": channels}))
        config = yaml.safe_load((agents / "customer-service" / "agent.yaml").read_text())
        config["notify"] = {"hooks": ["approval"], "db": ["approval"]}
        (agents / "customer-service" / "agent.yaml").write_text(yaml.safe_dump(config))
        secrets = boto3.client("secretsmanager")
        for name, value in {
            "hooks-key": WEBHOOK_KEY,
            "db-dsn": "postgresql://signoff:hunter2@db.internal/app",
        }.items():
            secrets.create_secret(Name=f"signoff/{name}", SecretString=value)
        deployed_at(monkeypatch, agents)
        message, notifier = (import_handler(f) for f in ("message", "notifier"))
        webhook.script([Reply(status=503), Reply(status=204)])

        paused = message.handler(load_event("message_post"), FakeLambdaContext())
        assert paused["statusCode"] == 202, paused["body"]
        pending_id = body(paused)["id"]
        batch = queued_batch(aws)
        capsys.readouterr()

        # the first delivery: the webhook answers 503 (retry), the database fails for good
        first = notifier.handler(batch, FakeLambdaContext())
        assert [f["itemIdentifier"] for f in first["batchItemFailures"]] == [
            batch["Records"][0]["messageId"]
        ]
        out = capsys.readouterr().out
        rows = {row.channel: row for row in message.API.outbox.rows(pending_id)}
        assert rows["db"].failed and "pip install 'signoff[database]'" in rows["db"].last_error
        assert not rows["hooks"].failed and rows["hooks"].notified_at is None
        # logged (the build, and the row given up) and counted, though the batch retries
        records = [r.__dict__ for r in caplog.records]
        built = [r for r in records if r["msg"] == "channel cannot be built"]
        assert [(r["channel"], r["retryable"]) for r in built] == [("db", False)]
        given_up = [r for r in records if r["msg"] == "notification failed, retry scheduled"]
        assert [r["channel"] for r in given_up] == ["db"]
        assert "psycopg" in given_up[0]["reason"]
        assert "hunter2" not in caplog.text
        # the metrics are flushed to stdout (Embedded Metric Format)
        lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        metrics = [line for line in lines if "_aws" in line]
        assert [line.get("NotificationsFailed") for line in metrics] == [[1.0]]
        assert "hunter2" not in out

        # the retry delivers the webhook once; the database row is not tried again
        second = notifier.handler(batch, FakeLambdaContext())
        assert second["batchItemFailures"] == []
        assert len(webhook.requests) == 2
        rows = {row.channel: row for row in message.API.outbox.rows(pending_id)}
        assert rows["hooks"].notified_at is not None and rows["db"].attempts == 1


def test_a_chat_channel_that_cannot_be_built_leaves_the_other_chat_channels_working(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signoff.aws.channels import chat_from_env
    from signoff.channels.config import ChannelsConfig
    from signoff.channels.slack.channel import SlackChannel
    from signoff.clock import SystemClock
    from signoff.settings import Deployment

    monkeypatch.setenv("SIGNOFF_CHANNEL_SECRETS_PREFIX", "signoff/")
    config = ChannelsConfig.model_validate(
        {
            "channels": {
                "team-slack": {
                    "type": "slack",
                    "channelId": "C0123",
                    "botToken": {"secret": "slack-bot"},
                    "signingSecret": {"secret": "slack-signing"},
                },
                "team-lark": {
                    "type": "lark",
                    "chatId": "oc_ops",
                    "appId": "cli_x",
                    "appSecret": {"secret": "lark-app"},  # never created
                    "verificationToken": {"secret": "lark-token"},
                },
            }
        }
    )
    secrets = boto3.client("secretsmanager")
    for name in ("slack-bot", "slack-signing", "lark-token"):
        secrets.create_secret(Name=f"signoff/{name}", SecretString=f"{name}-value")

    chat = chat_from_env(Deployment.from_env(), config, SystemClock())

    # a decision through Lark stands; only showing it in the card is skipped
    chat.updater("team-lark", {"message_id": "om_1"})("approved by ou_1")
    assert isinstance(chat.channels["team-slack"], SlackChannel)
