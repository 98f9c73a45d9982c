"""The Lambda handlers, driven by the files in events/, against moto."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from signoff.store.records import ApiKey
from tests.conftest import ROOT, validate_event
from tests.support.actors import person
from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas

pytestmark = pytest.mark.usefixtures("lambdas")


def with_path(event: dict[str, Any], path: str, **params: str) -> dict[str, Any]:
    event = json.loads(json.dumps(event))
    event["rawPath"] = path
    event["requestContext"]["http"]["path"] = path
    event["pathParameters"] = params
    return event


def with_body(event: dict[str, Any], payload: Any) -> dict[str, Any]:
    event = json.loads(json.dumps(event))
    event["body"] = payload if isinstance(payload, str) else json.dumps(payload)
    return event


def pause_refund(lambdas: Lambdas) -> dict[str, Any]:
    response = lambdas.invoke("message", load_event("message_post"))
    assert response["statusCode"] == 202, response
    paused = body(response)
    assert paused["type"] == "approval" and paused["tool"] == "issue_refund"
    assert paused["scope"] == {
        "tenant": "default",
        "environment": "production",
        "agent": "customer-service",
    }
    for event in paused["events"]:
        validate_event(event)
    return paused


def link_token(lambdas: Lambdas, pending_id: str, *, expires_in: float = 3600) -> str:
    item = lambdas.api.pending.get(pending_id)
    action = "answer" if item.kind == "question" else "decide"
    return lambdas.api.signer.issue(
        item.id, action, item.tenant, item.args, time.time() + expires_in
    )


def refund_results(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["statusText"]
        for e in events
        if e["type"] == "tool:result" and e["tool"] == "issue_refund"
    ]


def test_message_pauses_then_the_link_approves_it(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    assert paused["approveUrl"] == f"/approvals/{paused['id']}/approve"
    token = link_token(lambdas, paused["id"])
    page = lambdas.invoke("resolve", load_event("link_get", TOKEN=token))
    assert page["statusCode"] == 200 and "issue_refund" in page["body"]
    assert lambdas.api.pending.get(paused["id"]).status == "pending", "GET changes nothing"
    posted = lambdas.invoke("resolve", load_event("link_post", TOKEN=token))
    assert posted["statusCode"] == 200, posted["body"]
    assert "approved" in posted["body"].lower()
    status = lambdas.invoke("resolve", load_event("session_status", SESSION_ID=paused["sessionId"]))
    finished = body(status)
    assert finished["status"] == "done"
    assert refund_results(finished["events"]) == ["Approved."]


def test_approve_route_with_the_token_returns_the_finished_turn(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    event = load_event("approval_approve", PENDING_ID=paused["id"])
    event["headers"]["x-signoff-token"] = link_token(lambdas, paused["id"])
    done = lambdas.invoke("resolve", event)
    assert done["statusCode"] == 200, done["body"]
    result = body(done)
    assert result["sessionId"] == paused["sessionId"] and "stopReason" not in result
    assert refund_results(result["events"]) == ["Approved."]
    assert result["text"].startswith("Refunded 42.0 USD")


def test_deny_ends_denied(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    done = lambdas.invoke("resolve", load_event("approval_deny", PENDING_ID=paused["id"]))
    assert done["statusCode"] == 200, done["body"]
    assert body(done)["stopReason"] == "denied"
    assert refund_results(body(done)["events"]) == ["Denied."]


def test_the_durable_alias_resolves(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    done = lambdas.invoke(
        "resolve", load_event("pending_approval_resolve", PENDING_ID=paused["id"])
    )
    assert done["statusCode"] == 200
    assert refund_results(body(done)["events"]) in (["Approved."], ["Denied."])


def test_a_question_is_answered_then_the_refund_waits_for_approval(lambdas: Lambdas) -> None:
    asked = lambdas.invoke(
        "message", with_body(load_event("message_post"), {"message": "I want my money back"})
    )
    assert asked["statusCode"] == 202
    question = body(asked)
    assert (
        question["type"] == "question"
        and question["answerUrl"] == f"/questions/{question['id']}/answer"
    )
    answered = lambdas.invoke(
        "resolve",
        with_body(load_event("question_answer", PENDING_ID=question["id"]), {"answer": "A-1002"}),
    )
    assert answered["statusCode"] == 202, answered["body"]
    approval = body(answered)
    assert approval["type"] == "approval" and approval["args"] == {
        "orderId": "A-1002",
        "amount": 58.5,
    }
    done = lambdas.invoke("resolve", load_event("approval_approve", PENDING_ID=approval["id"]))
    assert body(done)["text"] == "Refunded 58.5 USD for order A-1002."


def test_the_pending_question_alias_answers(lambdas: Lambdas) -> None:
    asked = lambdas.invoke(
        "message", with_body(load_event("message_post"), {"message": "I want my money back"})
    )
    question = body(asked)
    answered = lambdas.invoke(
        "resolve", load_event("pending_question_answer", PENDING_ID=question["id"])
    )
    assert answered["statusCode"] in (200, 202), answered["body"]


def test_a_scheduled_run_is_recorded(lambdas: Lambdas) -> None:
    outcome = lambdas.invoke("message", load_event("schedule_daily_digest"))
    assert outcome["status"] == "finished"
    record = lambdas.api.sessions.load(outcome["sessionId"])
    assert record.status == "done" and record.agent == "daily-digest"
    assert record.text == "Daily digest: 3 orders today, 120.4 USD in revenue."


def test_two_resolutions_one_wins_one_conflicts(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    first = lambdas.invoke("resolve", load_event("approval_approve", PENDING_ID=paused["id"]))
    second = lambdas.invoke("resolve", load_event("approval_deny", PENDING_ID=paused["id"]))
    assert first["statusCode"] == 200 and second["statusCode"] == 409
    conflict = body(second)
    assert conflict["error"] == "already_resolved"
    assert conflict["current"]["status"] == "approved"
    assert (conflict["current"]["resolvedBy"], conflict["current"]["resolvedVia"]) == (
        "anonymous@default",
        "api",
    )


def test_forged_and_expired_tokens(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    good = link_token(lambdas, paused["id"])
    forged = good[:-2] + ("AA" if not good.endswith("AA") else "BB")
    assert lambdas.invoke("resolve", load_event("link_post", TOKEN=forged))["statusCode"] == 403
    event = load_event("approval_approve", PENDING_ID=paused["id"])
    event["headers"]["x-signoff-token"] = forged
    refused = lambdas.invoke("resolve", event)
    assert refused["statusCode"] == 403 and body(refused)["error"] == "forbidden"
    expired = link_token(lambdas, paused["id"], expires_in=-10)
    assert lambdas.invoke("resolve", load_event("link_post", TOKEN=expired))["statusCode"] == 410
    event["headers"]["x-signoff-token"] = expired
    assert lambdas.invoke("resolve", event)["statusCode"] == 410
    assert lambdas.api.pending.get(paused["id"]).status == "pending"


def test_a_token_for_another_item_is_forged(lambdas: Lambdas) -> None:
    one, other = pause_refund(lambdas), pause_refund(lambdas)
    event = load_event("approval_approve", PENDING_ID=one["id"])
    event["headers"]["x-signoff-token"] = link_token(lambdas, other["id"])
    assert lambdas.invoke("resolve", event)["statusCode"] == 403


def test_an_api_key_of_another_tenant_is_forbidden(lambdas: Lambdas) -> None:
    from signoff.keys.api_keys import new_api_key

    paused = pause_refund(lambdas)
    clear, key = new_api_key("acme-corp", "test", time.time())
    lambdas.api.api_keys.add(key)
    event = load_event("approval_approve", PENDING_ID=paused["id"])
    event["headers"]["x-api-key"] = clear
    refused = lambdas.invoke("resolve", event)
    assert refused["statusCode"] == 403, refused["body"]
    assert lambdas.api.pending.get(paused["id"]).status == "pending"
    # the refusal is audited with the key that tried and why
    audit = lambdas.api.turns.audit.for_subject(paused["sessionId"])
    assert [(a.kind, a.actor, a.channel, a.reason) for a in audit if a.kind == "refusal"] == [
        (
            "refusal",
            f"apikey:{key.key_id}@acme-corp",
            "api",
            "the request belongs to another tenant",
        )
    ]
    event["headers"]["x-api-key"] = "sok_nope_" + "x" * 32
    assert lambdas.invoke("resolve", event)["statusCode"] == 401
    assert isinstance(key, ApiKey)


def test_a_tenant_key_gets_its_own_rules(lambdas: Lambdas) -> None:
    from signoff.keys.api_keys import new_api_key

    clear, key = new_api_key("acme-corp", "test", time.time())
    lambdas.api.api_keys.add(key)
    event = load_event("message_post")
    event["headers"]["x-api-key"] = clear
    done = lambdas.invoke("message", event)
    assert done["statusCode"] == 200, "acme-corp may refund in production without a sign-off"
    assert refund_results(body(done)["events"]) == ["Approved."]


@pytest.mark.parametrize(
    ("payload", "status", "error"),
    [
        ("{not json", 400, "bad_request"),
        ({"sessionId": "x"}, 400, "bad_request"),
        ({"message": ""}, 400, "bad_request"),
        ({"message": "x" * 300_000}, 413, "payload_too_large"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error(
    lambdas: Lambdas, payload: Any, status: int, error: str
) -> None:
    response = lambdas.invoke("message", with_body(load_event("message_post"), payload))
    assert response["statusCode"] == status, response["body"]
    refused = body(response)
    assert refused["error"] == error and refused["detail"]
    assert "Traceback" not in response["body"]


def test_unknown_agent_is_404(lambdas: Lambdas) -> None:
    event = with_path(load_event("message_post"), "/agents/nobody/messages", name="nobody")
    response = lambdas.invoke("message", event)
    assert response["statusCode"] == 404
    assert "customer-service" in body(response)["detail"]


def test_wrong_method_is_405(lambdas: Lambdas) -> None:
    event = load_event("message_post")
    event["requestContext"]["http"]["method"] = "GET"
    response = lambdas.invoke("message", event)
    assert response["statusCode"] == 405 and body(response)["allowed"] == ["POST"]


def test_message_to_a_paused_session_is_409(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    again = lambdas.invoke(
        "message",
        with_body(
            load_event("message_post"), {"message": "hello?", "sessionId": paused["sessionId"]}
        ),
    )
    assert again["statusCode"] == 409
    assert body(again)["pendingId"] == paused["id"]
    assert body(again)["sessionStatus"] == "paused"


def test_a_long_turn_answers_running_and_the_continuation_finishes_it(lambdas: Lambdas) -> None:
    event = with_path(
        load_event("message_post"), "/agents/daily-digest/messages", name="daily-digest"
    )
    # Three seconds left: the safety margin, so the turn yields before its first step.
    response = lambdas.invoke("message", event, remaining_ms=3000)
    assert response["statusCode"] == 202, response["body"]
    running = body(response)
    assert running["type"] == "running"
    assert lambdas.continuations.drain() == [running["sessionId"]]
    outcome = lambdas.invoke(
        "message", load_event("continue_turn", SESSION_ID=running["sessionId"])
    )
    assert outcome["status"] == "finished"
    status = lambdas.invoke(
        "resolve",
        with_path(
            load_event("session_status", SESSION_ID=running["sessionId"]),
            running["statusUrl"],
            name="daily-digest",
            id=running["sessionId"],
        ),
    )
    assert body(status)["status"] == "done"


def test_session_status_polls_with_after(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    status = body(
        lambdas.invoke("resolve", load_event("session_status", SESSION_ID=paused["sessionId"]))
    )
    assert status["status"] == "paused" and status["pending"]["id"] == paused["id"]
    assert status["events"] == paused["events"] and status["next"] == len(paused["events"])
    event = load_event("session_status", SESSION_ID=paused["sessionId"])
    event["rawQueryString"] = f"after={status['next']}"
    event["queryStringParameters"] = {"after": str(status["next"])}
    assert body(lambdas.invoke("resolve", event))["events"] == []


def test_session_status_long_polls_with_wait(lambdas: Lambdas) -> None:
    paused = pause_refund(lambdas)
    after = len(paused["events"])

    def status_event(wait: float) -> dict[str, Any]:
        event = load_event("session_status", SESSION_ID=paused["sessionId"])
        event["rawQueryString"] = f"after={after}&wait={wait}"
        event["queryStringParameters"] = {"after": str(after), "wait": str(wait)}
        return event

    # Nothing is committed after N while the turn waits for a person: the wait runs out.
    started = time.monotonic()
    waited = body(lambdas.invoke("resolve", status_event(0.5)))
    assert time.monotonic() - started >= 0.5
    assert waited["status"] == "paused" and waited["events"] == [] and waited["next"] == after
    # The decision's commit ends a long wait at once, with the events after N.
    api = lambdas.api
    decide = threading.Timer(
        0.3,
        lambda: api.turns.resolve(paused["id"], decision="deny", actor=person("ops", "api")),
    )
    decide.start()
    started = time.monotonic()
    answered = body(lambdas.invoke("resolve", status_event(20)))
    took = time.monotonic() - started
    decide.join()
    # After the decision, and well before the 20 s wait ran out (a wait that runs out
    # answers no sooner): half of it is room for a loaded machine, not a speed bound.
    assert 0.3 <= took < 20 / 2, f"answered after {took:.1f} s of a 20 s wait"
    assert answered["events"] and answered["next"] == after + len(answered["events"])
    assert refund_results(answered["events"]) == ["Denied."]
    # More than API Gateway allows is refused, as any bad query.
    assert lambdas.invoke("resolve", status_event(26))["statusCode"] == 400


def test_agents_and_config(lambdas: Lambdas) -> None:
    agents = body(lambdas.invoke("resolve", load_event("agents_list")))
    assert [a["name"] for a in agents] == ["customer-service", "daily-digest"]
    config = body(lambdas.invoke("resolve", load_event("agent_config")))
    assert config["rules"]["defaultDecision"] == "deny"
    # the rules file as the agents folder names it, the rules with the file's own keys
    assert config["rules"]["source"] == "customer-service/actauth.yml"
    assert "/tmp" not in json.dumps(config) and str(ROOT) not in json.dumps(config)
    keys = {key for rule in config["rules"]["rules"] for key in rule}
    assert not {key for key in keys if key.endswith("_") or "_" in key}, keys


def test_openapi_is_served_and_matches_the_checked_in_file(lambdas: Lambdas) -> None:
    served = body(lambdas.invoke("resolve", load_event("openapi_get")))
    on_disk = json.loads((ROOT / "openapi.json").read_text())
    assert served == on_disk, (
        "openapi.json drifted; regenerate it with `signoff openapi > openapi.json`"
    )
    assert "/agents/{name}/messages" in served["paths"]
