"""What a decided chat message says: the card's summary, who decided, how, when — and a
deny's reason. Through the resolve handler on moto (``test_chat_binding``'s deployment)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from tests.functional.channels.test_chat_binding import deployment as deployment
from tests.functional.channels.test_chat_reasons import WHY, click

if TYPE_CHECKING:
    from tests.functional.channels.test_chat_binding import Deployment

WHEN = r"at \d{4}-\d\d-\d\d \d\d:\d\d UTC"


def test_a_denied_message_says_who_how_when_and_why(deployment: Deployment) -> None:
    paused = deployment.pause("acme", "customer-service")
    response = click(deployment, paused["id"], action="signoff_deny", reason=WHY)
    text = json.loads(response["body"])["text"]
    assert re.fullmatch(
        rf"Refund 42\.00 USD on order A-1001 — Denied by UB through the slack-b channel "
        rf"{WHEN}\. Reason: {re.escape(WHY)}",
        text,
    ), text


def test_an_approved_message_says_who_how_and_when(deployment: Deployment) -> None:
    paused = deployment.pause("acme", "customer-service")
    response = click(deployment, paused["id"], action="signoff_approve", reason=None)
    text = json.loads(response["body"])["text"]
    assert re.fullmatch(
        rf"Refund 42\.00 USD on order A-1001 — Approved by UB through the slack-b channel {WHEN}",
        text,
    ), text
    assert "via" not in text.split()
