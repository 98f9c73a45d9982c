"""A chat channel that lists ``approvers`` is sent no token that decides (issue 10).

Only a click names its person in Slack or Lark, so a link whose token names nobody
would let anyone who reads the message decide past the channel's ``approvers``.
The notifier sends the real Slack and Lark adapters (built from ``channels.yaml``
settings) to recording servers; the tests read the exact requests they sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from signoff.agents import load_agent
from signoff.channels.build import build_channels
from signoff.channels.config import ChannelsConfig
from signoff.clock import ManualClock
from signoff.keys.tokens import Signer, signer_from
from signoff.models.scripted import ScriptedModel
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier
from signoff.queue.memory import MemoryQueue
from signoff.secrets.memory import MemorySecrets
from signoff.store.memory import MemoryStore
from tests.support.agents import calls
from tests.support.durable import StaticAgents, turns_over
from tests.support.http_server import Recorded, RecordingServer, Reply

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.pending_records import PendingItem

AGENTS = Path(__file__).resolve().parents[3] / "agents"
PUBLIC = "https://api.example.com"
# Every resume token has this shape (signoff.keys.tokens): v1.<key id>.<payload>.<signature>.
TOKEN = re.compile(r"v1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
SECRETS = {
    "resume-signing": "k" * 32,
    "slack-bot": "xoxb-test",
    "slack-signing": "slack-signing-secret",
    "lark-app": "lark-app-secret",
    "lark-token": "lark-verification-token",
}
ASK_ACCOUNT = ("ask_user", {"question": "Which account?", "options": ["Checking", "Savings"]})
ASK_WRITTEN = ("ask_user", {"question": "What is the customer's new address?"})
REFUND = ("issue_refund", {"orderId": "A-1001", "amount": 42.0})


def vendor_ok(request: Recorded) -> Reply:
    """Slack's and Lark's answers to a send (and Lark's to its token request)."""
    if request.path.endswith("chat.postMessage"):
        return Reply(json={"ok": True, "ts": "1764460800.000100", "channel": "C0123"})
    if request.path.endswith("tenant_access_token/internal"):
        return Reply(json={"code": 0, "tenant_access_token": "t-abc", "expire": 7200})
    return Reply(json={"code": 0, "data": {"message_id": "om_x100"}})


@dataclass
class Chat:
    """One chat channel of a deployment and the server playing its vendor."""

    vendor: str
    server: RecordingServer
    signer: Signer
    store: MemoryStore
    notifier: Notifier
    clock: ManualClock

    def send(self, call: tuple[str, dict[str, Any]]) -> tuple[PendingItem, str]:
        """Pause a turn on ``call``, deliver it; the item and the message text the vendor got."""
        agent = load_agent(AGENTS / "customer-service")
        config = agent.config.model_copy(update={"notify": {"chat": ["approval", "question"]}})
        agent = type(agent)(**{**agent.__dict__, "config": config})
        model = ScriptedModel(lambda _request: calls(call))
        turns = turns_over(
            self.store, MemoryQueue(), StaticAgents({agent.name: (agent, model)}), self.clock
        )
        paused = turns.send(agent.name, "hello", tenant="default", environment="production")
        assert paused.pending is not None
        self.server.script([vendor_ok] * 3)
        assert self.notifier.deliver(paused.pending.id).sent == ["chat"]
        sent = [r for r in self.server.requests if not r.path.endswith("/internal")]
        assert len(sent) == 1
        return paused.pending, message_text(self.vendor, sent[0])

    def actions(self, text: str) -> list[str]:
        """The decisions the tokens in ``text`` grant, one list entry per token found."""
        return [self.signer.verify(t, self.clock.now().timestamp()).action for t in tokens(text)]


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def message_text(vendor: str, request: Recorded) -> str:
    """All the request says, the Lark card (a JSON string inside the body) unwrapped."""
    sent = request.json()
    if vendor == "lark":
        sent["content"] = json.loads(sent["content"])
    return json.dumps(sent, ensure_ascii=False)


def chat_settings(vendor: str, url: str, approvers: list[str]) -> dict[str, Any]:
    if vendor == "slack":
        return {
            "type": "slack",
            "channelId": "C0123",
            "botToken": {"secret": "slack-bot"},
            "signingSecret": {"secret": "slack-signing"},
            "baseUrl": url,
            "approvers": approvers,
        }
    return {
        "type": "lark",
        "chatId": "oc_ops",
        "appId": "cli_x",
        "appSecret": {"secret": "lark-app"},
        "verificationToken": {"secret": "lark-token"},
        "baseUrl": url,
        "approvers": approvers,
    }


def chat_of(vendor: str, approvers: list[str]) -> Iterator[Chat]:
    clock = ManualClock()
    secrets = MemorySecrets(SECRETS)
    signer = signer_from(secrets)
    store = MemoryStore(clock=clock)
    with RecordingServer() as server, httpx.Client(timeout=5) as http:
        config = ChannelsConfig.model_validate(
            {"channels": {"chat": chat_settings(vendor, server.url, approvers)}}
        )
        notifier = Notifier(
            pending=store.pending,
            outbox=store.outbox,
            channels=build_channels(config, secrets, http=http, clock=clock),
            composer=lambda: Composer(signer=signer, public_url=PUBLIC),
            clock=clock,
        )
        yield Chat(vendor, server, signer, store, notifier, clock)


@pytest.fixture(params=["slack", "lark"])
def restricted(request: pytest.FixtureRequest) -> Iterator[Chat]:
    """A Slack or Lark channel whose ``approvers`` list one user."""
    yield from chat_of(request.param, ["U012ABC" if request.param == "slack" else "ou_ops"])


@pytest.fixture(params=["slack", "lark"])
def open_chat(request: pytest.FixtureRequest) -> Iterator[Chat]:
    """A Slack or Lark channel without ``approvers``: anyone in the chat decides."""
    yield from chat_of(request.param, [])


def test_a_question_to_a_channel_with_approvers_carries_no_token_that_decides(
    restricted: Chat,
) -> None:
    item, text = restricted.send(ASK_ACCOUNT)

    # the options are still buttons that decide by who clicks (checked against approvers)
    assert "Checking" in text and "Savings" in text
    # no answer route, no ?token=, and every link token in the message decides nothing
    assert "/questions/" not in text.replace(f"POST /questions/{item.id}/answer", "")
    assert "token=" not in text
    assert restricted.actions(text) == ["view"]
    assert f"{PUBLIC}/a/" in text and "View in browser" in text
    assert "Answer in browser" not in text


def test_a_question_needing_a_written_answer_says_where_to_give_it(restricted: Chat) -> None:
    item, text = restricted.send(ASK_WRITTEN)

    assert "cannot take a written answer" in text
    assert f"POST /questions/{item.id}/answer" in text
    assert "token=" not in text and restricted.actions(text) == ["view"]


def test_an_approval_to_a_channel_with_approvers_carries_no_token(restricted: Chat) -> None:
    _, text = restricted.send(REFUND)

    assert "Approve" in text and "Deny" in text
    assert tokens(text) == [] and "token=" not in text


def test_without_approvers_a_question_links_its_answer_page_as_before(open_chat: Chat) -> None:
    item, text = open_chat.send(ASK_ACCOUNT)

    assert f"{PUBLIC}/questions/{item.id}/answer?token=" in text
    assert "Answer in browser" in text
    assert set(open_chat.actions(text)) == {"answer"}
