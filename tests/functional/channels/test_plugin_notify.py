"""The notifier function on moto with the seed's ``notify`` shorthand: an agent saying
``notify: [console, team-inbox]`` — the built-in console channel, which
``channels.yaml`` does not define, and a ``type: python`` plug-in — gets its
approval on both, each once with its key.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import yaml

from tests.conftest import ROOT
from tests.support.lambdas import (
    FakeLambdaContext,
    body,
    deployed_at,
    import_handler,
    load_event,
    queued_batch,
)
from tests.support.plugin_channel import INBOXES

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from tests.support.aws import AwsResources


def test_notify_shorthand_reaches_the_implicit_console_and_a_python_plugin(
    aws: AwsResources,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    INBOXES.clear()
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    channels = {
        "team-inbox": {
            "type": "python",
            "class": "tests.support.plugin_channel:InboxChannel",
            "options": {"inbox": "functional"},
        }
    }
    (agents / "channels.yaml").write_text(yaml.safe_dump({"channels": channels}))
    for agent in ("customer-service", "daily-digest"):
        config = yaml.safe_load((agents / agent / "agent.yaml").read_text())
        config["notify"] = ["console", "team-inbox"]
        (agents / agent / "agent.yaml").write_text(yaml.safe_dump(config))
    deployed_at(monkeypatch, agents)
    message, notifier = (import_handler(f) for f in ("message", "notifier"))

    paused = message.handler(load_event("message_post"), FakeLambdaContext())
    assert paused["statusCode"] == 202, paused["body"]
    pending_id = body(paused)["id"]
    capsys.readouterr()

    done = notifier.handler(queued_batch(aws), FakeLambdaContext())

    assert done["batchItemFailures"] == []
    rows = {row.channel: row for row in message.API.outbox.rows(pending_id)}
    assert sorted(rows) == ["console", "team-inbox"]
    assert all(row.notified_at is not None for row in rows.values())
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    # every event: the run's start announced too, the approval once with its key (the
    # notifier sends a batch's subjects concurrently, so in either order)
    assert sorted(line.split(" ")[0] for line in printed) == ["[approval]", "[info]"]
    [approval] = [line for line in printed if line.startswith("[approval] ")]
    assert approval.startswith("[approval] customer-service ")
    assert f"{pending_id}:console" in approval
    inbox = INBOXES["functional"].keys
    assert len(inbox) == 2
    assert sum(key.endswith(":run_start:team-inbox") for key in inbox) == 1
    assert rows["team-inbox"].idempotency_key in inbox
