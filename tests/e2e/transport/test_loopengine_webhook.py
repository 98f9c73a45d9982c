"""A loopengine-style agent on the local stack (issue 13): its ``httpNotifier`` webhook,
written with the seed's ``webhookUrl`` / ``webhookSecret``, receives the approval of an
``http`` turn at a plain HTTP server, signed with that secret, in seed 004's shape; and
the run's end once the approval resumes it (``events: [approval, run_finish]``); its
``hooks.py`` (loopengine's ``onRunStart`` / ``onRunFinish``) fires on that ``http`` turn.
"""

from __future__ import annotations

import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import httpx
from standardwebhooks.webhooks import Webhook

from signoff.channels.webhook import whsec_form
from signoff_dev.local.stack import LocalStack, StackSettings
from tests.support.local_stack import REFUND, WAIT, eventually
from tests.support.loopengine import loopengine_agent

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import pytest

SECRET = "loopengine-webhook-secret"
SEED_004 = {"kind", "agent", "runId", "title", "body", "resumeToken", "expiresAt"}


class Receiver:
    """A plain HTTP server on loopback that keeps every POST it gets."""

    def __init__(self) -> None:
        received: list[tuple[dict[str, str], bytes]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.received = received
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/loop"

    def __enter__(self) -> Receiver:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def verified(self, kind: str) -> Iterator[tuple[dict[str, str], dict[str, Any]]]:
        """The deliveries of ``kind`` whose signature verifies with the webhookSecret."""
        for headers, body in list(self.received):
            payload = Webhook(whsec_form(SECRET)).verify(body, headers)
            if payload.get("kind") == kind:
                yield headers, payload


def test_the_http_notifier_webhook_gets_the_approval_and_the_runs_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the secret's value, as the local stack reads channel secrets (SIGNOFF_SECRET_<NAME>)
    monkeypatch.setenv("SIGNOFF_SECRET_LOOP_HOOK", SECRET)
    # the receiver is on loopback, which signoff refuses unless the deployment allows it
    monkeypatch.setenv("SIGNOFF_ALLOW_PRIVATE_WEBHOOKS", "true")
    hook_log = tmp_path / "hooks.log"
    monkeypatch.setenv("LOOP_HOOK_LOG", str(hook_log))
    agents = tmp_path / "agents"
    console = io.StringIO()
    with Receiver() as receiver:
        loopengine_agent(
            agents,
            httpNotifier={
                "channel": "webhook",
                "config": {"webhookUrl": receiver.url, "webhookSecret": {"secret": "loop-hook"}},
                "events": ["approval", "run_finish"],
            },
        )
        settings = StackSettings(port=0, agents=agents, console=console, logs=console)
        with LocalStack(settings) as stack, httpx.Client(base_url=stack.url, timeout=WAIT) as http:
            sent = http.post("/agents/customer-service/messages", json={"message": REFUND})
            assert sent.status_code == 202, sent.text
            paused = sent.json()

            headers, approval = eventually(
                lambda: next(receiver.verified("approval"), None), "the approval's webhook"
            )
            assert set(approval) >= SEED_004
            assert approval["agent"] == "customer-service"
            assert approval["pendingId"] == paused["id"]
            assert approval["sessionId"] == paused["sessionId"]
            # the seed's idempotency key of an approval: runId:approvalId
            assert headers["idempotency-key"] == f"{approval['runId']}:{paused['id']}"

            # approving from the notification's own link resumes and finishes the run
            link = approval["linkUrl"]
            form = {"token": link.rsplit("/", 1)[1], "decision": "approve"}
            approved = http.post(link, data=form, headers={"origin": stack.url})
            assert approved.status_code == 200, approved.text

            _, finished = eventually(
                lambda: next(receiver.verified("result"), None), "the run_finish webhook"
            )
            assert finished["runId"] == approval["runId"]
            assert finished["body"].startswith("Refunded 42.0 USD for order A-1001")
            # only the events the httpNotifier lists: no run_start was sent
            kinds = [json.loads(body)["kind"] for _, body in receiver.received]
            assert sorted(set(kinds)) == ["approval", "result"]

            # its hooks.py fired on the http channel: the message's start, the
            # resolution's start, and the finish in the function that resumed it
            fired = eventually(
                lambda: len(lines := hook_log.read_text().splitlines()) >= 3 and lines,
                "the three hook calls",
            )
            common = {
                "agent": "customer-service",
                "tenant": "default",
                "channel": "http",
                "sessionId": paused["sessionId"],
            }
            assert [json.loads(line) for line in fired] == [
                {**common, "hook": "on_run_start", "trigger": "message"},
                {**common, "hook": "on_run_start", "trigger": "resolution"},
                {**common, "hook": "on_run_finish", "text": finished["body"], "stopReason": None},
            ]
