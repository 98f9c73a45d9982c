"""The local stack's captured emails: the sample ``local-email`` channel sends through the
emulator's SES, and the stack's mailbox prints and lists what it accepted.

One stack serves the module (started on free ports, its console kept for reading).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.support.local_stack import REFUND, email_for, eventually, link_item, pending_item
from tests.support.local_stack import http as http
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    import io

    import httpx

    from signoff_dev.local.stack import LocalStack


def test_a_paused_approval_is_emailed_with_a_link_that_opens_its_page(
    stack: LocalStack, http: httpx.Client
) -> None:
    # given a production refund that pauses for a sign-off
    sent = http.post("/agents/customer-service/messages", json={"message": REFUND})
    assert sent.status_code == 202, sent.text
    paused = sent.json()

    # then the sample email channel's mail was captured, with one link: the page
    email = email_for(stack, http, paused["id"])
    assert email["to"] == ["approver@example.com"]
    assert email["from"] == "signoff@example.com"
    # the subject is the decision card's summary (the tool's summary template)
    assert email["subject"] == "Approve? Refund 42.00 USD on order A-1001"
    assert "issue_refund" in email["text"] and "<" not in email["text"]
    [link] = email["links"]
    assert link.startswith(f"{stack.url}/a/")
    assert f'href="{link}"' in email["html"]
    assert "/approve" not in email["html"] and "/deny" not in email["html"]
    assert email["receivedAt"]

    # and the console showed it with its link
    console: io.StringIO = stack.settings.console  # type: ignore[assignment]
    shown = eventually(lambda: link in console.getvalue(), "the email on the console")
    assert shown and "email to approver@example.com" in console.getvalue()

    # when the link is opened, the page shows the call and the session stays paused
    page = http.get(link)
    assert page.status_code == 200 and "issue_refund" in page.text
    assert pending_item(stack, paused["id"])["status"]["S"] == "pending"
    assert http.get(paused["statusUrl"]).json()["status"] == "paused"


def test_emails_are_listed_oldest_first_each_once(stack: LocalStack, http: httpx.Client) -> None:
    first = http.post("/agents/customer-service/messages", json={"message": REFUND}).json()
    second = http.post("/agents/customer-service/messages", json={"message": REFUND}).json()
    email_for(stack, http, second["id"])
    email_for(stack, http, first["id"])

    listed = http.get("/_local/emails").json()["emails"]
    ids = [link_item(stack, e["links"][0]) for e in listed]
    assert len(ids) == len(set(ids)), "an email was listed twice"
    times = [e["receivedAt"] for e in listed]
    assert times == sorted(times)
