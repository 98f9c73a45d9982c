"""The decision card: one summary line, the conversation, the rule, whom, when, the arguments.

The same card reaches the email (text and HTML), the chat messages and the link
page; these tests go through the Composer and the channels' renderers.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import TYPE_CHECKING

import pytest

from signoff.agents.config import AgentConfig
from signoff.approver.card import decided_line, readable_args, relative, summarize
from signoff.channels.email import render
from signoff.channels.lark.channel import render_card
from signoff.channels.slack.channel import render_blocks
from signoff.durable.pausing import pending_item
from signoff.engine import TurnState
from signoff.events import ApprovalPending, PendingScope
from signoff.keys.tokens import Signer
from signoff.messages import AssistantMessage, ToolCall, UserMessage
from signoff.notify.compose import Composer
from signoff.tools import tool as signoff_tool
from tests.support.agents import make_agent
from tests.support.builders import T0, pending_approval

if TYPE_CHECKING:
    from signoff.channels.notification import Notification
    from signoff.store.pending_records import PendingItem

ARGS = {"amount": 42, "currency": "USD", "orderId": "A-1001"}
TEMPLATE = "Refund {amount} {currency} on order {orderId}"


def composer() -> Composer:
    return Composer(signer=Signer({"k1": b"k" * 32}, "k1"), public_url="https://api.example.com")


def carded(**changes: object) -> Notification:
    fields: dict[str, object] = {
        "tool": "issue_refund",
        "args": ARGS,
        "summary": summarize(TEMPLATE, "issue_refund", ARGS),
        "request": "Order A-1001 came broken, refund me please",
        "said": "The teapot was broken on arrival; I will refund the full 42 USD.",
        "reason": "matched rule 'refunds-need-approval'",
    }
    return composer().for_item(pending_approval(**{**fields, **changes}))


def test_a_tools_summary_template_is_filled_from_the_arguments() -> None:
    assert summarize(TEMPLATE, "issue_refund", ARGS) == "Refund 42 USD on order A-1001"
    assert summarize("Refund {amount:.2f}", "issue_refund", ARGS) == "Refund 42.00"


@pytest.mark.parametrize(
    "template",
    [
        "Refund {amount} on {missing}",  # a field the model left out
        "Refund {amount:d} {currency:d}",  # a format the value does not take
        "Refund {amount.__class__}",  # an attribute: never reached into
        "Refund {currency[0]}",  # an index
        "Refund {amount!r}",  # a conversion
        "Refund {amount",  # not a template
        "{}",  # positional
    ],
)
def test_a_template_that_cannot_be_filled_falls_back_to_the_arguments(template: str) -> None:
    assert summarize(template, "issue_refund", ARGS) == (
        "Issue refund: amount 42, currency USD, orderId A-1001"
    )


def test_without_a_template_the_arguments_read_as_one_clipped_line() -> None:
    long = {"note": "line one\nline two " + "x" * 300}
    line = readable_args("send_email", long)
    assert "\n" not in line and line.startswith("Send email: note line one line two")
    assert len(line) <= 160 and line.endswith("…")


def test_relative_times_read_in_the_largest_unit() -> None:
    assert relative(3600 * 23 + 59) == "in 23 hours"
    assert relative(86400) == "in 1 day"
    assert relative(-120) == "2 minutes ago"


@pytest.mark.parametrize(
    ("by", "via", "expected"),
    [
        ("alice@example.com", "ops-mail", "Approved by alice@example.com through the ops-mail"),
        ("link", "link", "Approved through a link that names no person"),
        ("apikey:k7@acme", "api", "Approved by API key k7 of tenant acme through the signoff API"),
        ("U123", "ops-slack", "Approved by U123 through the ops-slack channel"),
    ],
)
def test_the_decided_line_says_who_how_and_when(by: str, via: str, expected: str) -> None:
    line = decided_line("approved", by, via, T0)
    assert line is not None and line.startswith(expected)
    assert line.endswith(" at 2026-01-01 00:00 UTC") or "UTC" in line
    assert "Via: link" not in line and "By: link" not in line


def test_the_composed_approval_is_the_card() -> None:
    note = carded()
    assert note.title == "Approve? Refund 42 USD on order A-1001"
    for part in (
        "Request: Order A-1001 came broken, refund me please",
        "The agent said:",
        "Why it asks: matched rule 'refunds-need-approval'",
        "For: agent refunds · tenant acme · production",
        "Expires: in 1 hour (",
    ):
        assert part in note.body
    assert '"orderId": "A-1001"' in note.body  # seed 004: the body shows the input as JSON


def test_the_email_shows_the_card_the_arguments_once_and_a_readable_expiry() -> None:
    text, html = render(carded())
    assert text.startswith("Approve? Refund 42 USD on order A-1001\n")
    assert text.count('"orderId": "A-1001"') == 1 and html.count("A-1001</pre>") == 0
    assert html.count("&quot;orderId&quot;: &quot;A-1001&quot;") == 1
    assert "Expires: in 1 hour (" in text and " UTC)" in text
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text + html)  # no raw RFC 3339
    assert html.count("<a ") == 1 and "Review and decide" in html
    assert 'name="color-scheme" content="light dark"' in html
    assert "prefers-color-scheme: dark" in html


def test_the_conversation_is_escaped_and_hidden_characters_shown() -> None:
    note = carded(
        request="<img src=x onerror=alert(1)> pay acct\u202e4321",
        said="</pre><script>alert(1)</script>",
    )
    text, html = render(note)
    assert "<img" not in html and "<script>" not in html
    assert "\u202e" not in html and "\\u202e" in html and "\\u202e" in text
    blocks = str(render_blocks(note))
    assert "<img" not in blocks and "\\\\u202e" in blocks


def test_the_chat_message_shows_the_card_and_the_arguments_once() -> None:
    blocks = render_blocks(carded())
    text = "\n".join(str(b) for b in blocks)
    assert "Refund 42 USD on order A-1001" in blocks[0]["text"]["text"]
    assert "Why it asks" in text and "The agent said" in text
    assert text.count("A-1001&quot;") + text.count('"orderId": "A-1001"') == 1


def _refund(amount: float, currency: str, orderId: str) -> str:
    return "refunded"


def _paused(conversation: bool = True) -> PendingItem:
    tool = signoff_tool(summary=TEMPLATE, name="issue_refund")(_refund)
    agent = make_agent(tool)
    if not conversation:
        config = agent.config.model_dump(by_alias=True) | {"approvalCard": {"conversation": False}}
        agent = dataclasses.replace(agent, config=AgentConfig.model_validate(config))
    call = ToolCall(id="c1", name="issue_refund", args=ARGS)
    history = [
        UserMessage(content="an older turn"),
        AssistantMessage(content="done"),
        UserMessage(content="Order A-1001 came broken"),
        AssistantMessage(content="Looking it up.", tool_calls=(ToolCall(id="c0", name="x"),)),
        AssistantMessage(content="It was paid 42 USD; refunding.", tool_calls=(call,)),
    ]
    state = TurnState(
        agent=agent.name,
        tenant="acme",
        environment="production",
        session_id="s1",
        run_id="r1",
        task_at=2,
        awaiting_call="c1",
    )
    pending = ApprovalPending(
        id="p1",
        tool="issue_refund",
        args=ARGS,
        scope=PendingScope(tenant="acme", environment="production", agent=agent.name),
        reason="matched rule 'refunds'",
        requested_at="2026-01-01T00:00:00.000Z",
    )
    return pending_item(agent, state, pending, T0, history, policy=None)


def test_a_pause_stores_the_summary_the_request_and_the_agents_words() -> None:
    item = _paused()
    assert item.summary == "Refund 42 USD on order A-1001"
    assert item.request == "Order A-1001 came broken"  # the turn's task, not an older turn
    assert item.said == "It was paid 42 USD; refunding."  # the reply that made the call


def test_approval_card_conversation_false_leaves_the_conversation_out() -> None:
    item = _paused(conversation=False)
    assert item.summary == "Refund 42 USD on order A-1001"
    assert item.request is None and item.said is None
    note = composer().for_item(item)
    assert "Request" not in note.body and "The agent said" not in note.body
    assert "broken" not in render(note)[1]


def test_agent_yaml_spells_the_switch_approval_card() -> None:
    config = AgentConfig.model_validate({"system": "x", "approvalCard": {"conversation": False}})
    assert config.approval_card.conversation is False
    with pytest.raises(ValueError, match="conversaton"):
        AgentConfig.model_validate({"system": "x", "approvalCard": {"conversaton": False}})


def test_the_lark_card_shows_the_summary_the_card_and_a_readable_expiry() -> None:
    card = render_card(carded())
    assert card["header"]["title"]["content"] == "Approve? Refund 42 USD on order A-1001"
    texts = json.dumps(card, ensure_ascii=False)
    assert "Why it asks" in texts and "The agent said" in texts
    assert "Expires: in 1 hour (2026-01-01 01:00 UTC)" in texts
    assert texts.count('\\"orderId\\": \\"A-1001\\"') == 1  # the arguments once
