"""Issue 12's acceptance on the local stack: one channel that cannot be built never
silences the others, and one misconfigured agent never breaks the healthy ones.

The stack serves a copy of the sample agents whose ``channels.yaml`` adds a
``database`` channel beside the webhook and email ones, in a process where
``psycopg`` cannot be imported (as in the deployed engine layer, which lacks the
``signoff[database]`` extra): ``sys.modules["psycopg"] = None`` makes every import
of it fail, for this module's stack only. A second agent names a channel that
``channels.yaml`` does not define.
"""

from __future__ import annotations

import logging
import logging.handlers
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from signoff.secrets.env import variable_name
from tests.support.local_stack import REFUND, email_for, eventually, notification_for, running_stack
from tests.support.local_stack import http as http

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

    from signoff_dev.local.stack import LocalStack

AGENTS = Path(__file__).resolve().parents[3] / "agents"
BROKEN = "broken-digest"
# What the functions logged (the ``signoff`` logger, Powertools' and the engine's).
LOGGED = logging.handlers.BufferingHandler(capacity=100_000)


def agents_with_a_database_channel(root: Path) -> Path:
    """The sample agents, a ``db`` channel added and named by customer-service, plus
    an agent whose ``notify`` names no channel."""
    agents = root / "agents"
    shutil.copytree(AGENTS, agents)
    channels = agents / "channels.yaml"
    channels.write_text(
        channels.read_text(encoding="utf-8")
        + "  db:\n    type: database\n    dsn: {secret: db-dsn}\n",
        encoding="utf-8",
    )
    service = agents / "customer-service" / "agent.yaml"
    service.write_text(service.read_text(encoding="utf-8") + "  db: [approval]\n", encoding="utf-8")
    shutil.copytree(agents / "daily-digest", agents / BROKEN)
    broken = agents / BROKEN / "agent.yaml"
    broken.write_text(
        broken.read_text(encoding="utf-8") + "notify:\n  nowhere: [approval]\n", encoding="utf-8"
    )
    return agents


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    agents = agents_with_a_database_channel(tmp_path_factory.mktemp("isolation"))
    logging.getLogger("signoff").addHandler(LOGGED)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "psycopg", None)  # the library is not installed
        # its secret is there: the missing library is the one thing wrong
        patch.setenv(variable_name("db-dsn"), "postgresql://signoff:pw@127.0.0.1:1/none")
        try:
            with running_stack(agents) as local:
                yield local
        finally:
            logging.getLogger("signoff").removeHandler(LOGGED)


def test_webhook_and_email_deliver_while_the_database_rows_fail_with_the_reason(
    stack: LocalStack, http: httpx.Client
) -> None:
    # given an approval notified on the webhook, the email and the database channel
    sent = http.post("/agents/customer-service/messages", json={"message": REFUND})
    assert sent.status_code == 202, sent.text
    pending_id = sent.json()["id"]

    # then the webhook and the email deliver
    assert notification_for(http, pending_id)["notification"]["tool"] == "issue_refund"
    assert email_for(stack, http, pending_id)["to"] == ["approver@example.com"]

    # and the database row failed for good, saying which extra to install
    outbox = stack.message_api().outbox

    def settled() -> dict[str, object] | None:
        rows = {row.channel: row for row in outbox.rows(pending_id)}
        done = all(row.failed or row.notified_at is not None for row in rows.values())
        return dict(rows) if done and len(rows) == 3 else None

    rows = eventually(settled, "every channel's row to settle")
    db = rows["db"]
    assert db.failed and db.notified_at is None  # type: ignore[attr-defined]
    reason = db.last_error  # type: ignore[attr-defined]
    assert "psycopg" in reason and "pip install 'signoff[database]'" in reason
    assert "pw@" not in reason
    for channel in ("local-webhook", "local-email"):
        assert rows[channel].notified_at is not None  # type: ignore[attr-defined]

    # and the agents are listed
    listed = http.get("/agents")
    assert listed.status_code == 200, listed.text
    assert "customer-service" in {agent["name"] for agent in listed.json()}


def test_a_misconfigured_agent_is_reported_at_start_and_never_breaks_the_others(
    stack: LocalStack, http: httpx.Client
) -> None:
    from signoff_dev.cli.dev import _banner

    # every function's cold start said which agent, file and field are wrong
    logged = [r.__dict__ for r in LOGGED.buffer if r.getMessage() == "agent misconfigured"]
    assert len(logged) >= 3  # message, resolve, sweeper
    assert {(r["agent"], r["field"]) for r in logged} == {(BROKEN, "notify.nowhere")}
    assert all(r["file"].endswith(f"{BROKEN}/agent.yaml") for r in logged)
    # and so does `signoff dev`'s banner, for that agent only
    banner = [line for line in _banner(stack).splitlines() if "misconfigured" in line]
    assert len(banner) == 1 and BROKEN in banner[0] and "'nowhere'" in banner[0]

    # GET /agents lists every agent, the broken one marked
    listed = http.get("/agents")
    assert listed.status_code == 200, listed.text
    status = {agent["name"]: agent["status"] for agent in listed.json()}
    assert status == {
        "customer-service": "ready",
        "daily-digest": "ready",
        BROKEN: "misconfigured",
    }

    # a request to the broken agent gets a clear error; the healthy ones still run
    refused = http.post(f"/agents/{BROKEN}/messages", json={"message": "digest"})
    assert refused.status_code == 500
    body = refused.json()
    assert body["error"] == "agent_misconfigured"
    assert "configuration of this agent" in body["detail"]
    assert "/agent.yaml" not in body["detail"]  # no deployment path to a client
    healthy = http.post("/agents/daily-digest/messages", json={"message": "digest"})
    assert healthy.status_code == 200, healthy.text
