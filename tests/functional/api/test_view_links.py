"""A ``view`` link (what a chat channel with approvers is sent) shows its item and decides nothing.

The resolve handler on moto: ``GET /a/{token}`` with a view token shows what is
asked without a form; a ``POST`` with it is 403 whatever the form says, and the
item, its audit trail and the turn stay as they were.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas

pytestmark = pytest.mark.usefixtures("lambdas")

FORMS = {
    "approval": ({"decision": "approve"}, {"decision": "deny"}),
    "question": ({"decision": "answer", "choice": "A-1001"}, {"answer": "A-1002"}),
}


def pause(lambdas: Lambdas, kind: str) -> dict[str, Any]:
    """A turn paused on an approval (a refund) or a question (which order)."""
    event = load_event("message_post")
    if kind == "question":
        event["body"] = '{"message": "I want my money back"}'
    response = lambdas.invoke("message", event)
    assert response["statusCode"] == 202, response["body"]
    paused: dict[str, Any] = body(response)
    assert paused["type"] == kind
    return paused


def view_token(lambdas: Lambdas, pending_id: str) -> str:
    item = lambdas.api.pending.get(pending_id)
    return str(
        lambdas.api.signer.issue(item.id, "view", item.tenant, item.args, time.time() + 3600)
    )


def post(lambdas: Lambdas, token: str, form: dict[str, str]) -> dict[str, Any]:
    event = load_event("link_post", TOKEN=token)
    event["body"] = urlencode({**form, "token": token})
    event["headers"]["content-length"] = str(len(event["body"]))
    return lambdas.invoke("resolve", event)


@pytest.mark.parametrize("kind", ["approval", "question"])
def test_a_view_link_shows_the_item_without_a_form(lambdas: Lambdas, kind: str) -> None:
    paused = pause(lambdas, kind)
    token = view_token(lambdas, paused["id"])

    page = lambdas.invoke("resolve", load_event("link_get", TOKEN=token))

    assert page["statusCode"] == 200, page["body"]
    shown = page["body"]
    assert ("issue_refund" in shown and "A-1001" in shown) if kind == "approval" else True
    assert ("Which order should I refund?" in shown) if kind == "question" else True
    assert "<form" not in shown and "<button" not in shown and "<textarea" not in shown
    assert token not in shown, "the page does not hand the token on"
    assert "only shows the request" in shown


@pytest.mark.parametrize("kind", ["approval", "question"])
def test_posting_a_view_link_is_403_and_changes_nothing(lambdas: Lambdas, kind: str) -> None:
    paused = pause(lambdas, kind)
    token = view_token(lambdas, paused["id"])
    audited = lambdas.api.turns.audit.for_subject(paused["sessionId"])

    answers = [post(lambdas, token, form) for form in FORMS[kind]]

    assert [a["statusCode"] for a in answers] == [403, 403]
    assert all("cannot decide" in a["body"] for a in answers)
    item = lambdas.api.pending.get(paused["id"])
    assert (item.status, item.resolved_by) == ("pending", None)
    assert lambdas.api.turns.audit.for_subject(paused["sessionId"]) == audited
    assert lambdas.continuations.drain() == []
