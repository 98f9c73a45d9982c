"""``hooks.py`` through the Lambda handlers on moto, per entry point.

Given the sample agents with a recording ``hooks.py`` (loopengine-style: it would
trust an ``x-tenant-id`` header if one reached it), when the message function runs a
plain request, a scheduled run and a continuation, and the resolve function decides,
then the run hooks fire on ``http`` and ``schedule`` with the seed's context, the
finish of a paused run fires in the resolve function's invocation and not at the
pause, ``tenant_for`` maps only the verified key (a client's tenant header changes
nothing), and ``session_id_for`` picks sessions that stay their tenant's.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest

from signoff.continuations.memory import MemoryContinuations
from signoff.keys.api_keys import new_api_key
from tests.support.hooks import agents_with_hooks, hook_calls, named
from tests.support.lambdas import (
    Lambdas,
    body,
    deployed_at,
    import_handler,
    imported_lambdas,
    load_event,
)

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.aws import AwsResources

WHERE = "where is order A-1001?"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "hooks.jsonl"


@pytest.fixture
def lambdas(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, log: Path
) -> Lambdas:
    deployed_at(monkeypatch, agents_with_hooks(tmp_path, log))
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "signoff")
    return imported_lambdas(aws)


def message(
    lambdas: Lambdas, payload: dict[str, Any], *, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    event = load_event("message_post")
    event["body"] = json.dumps(payload)
    event["headers"]["content-length"] = str(len(event["body"].encode()))
    event["headers"].update(headers or {})
    return lambdas.invoke("message", event)


def key_for(lambdas: Lambdas, tenant: str) -> str:
    clear, key = new_api_key(tenant, "test", time.time())
    lambdas.api.api_keys.add(key)
    return clear


def test_a_plain_request_fires_both_hooks_on_http(lambdas: Lambdas, log: Path) -> None:
    done = message(lambdas, {"message": WHERE})

    assert done["statusCode"] == 200, done["body"]
    start, finish = hook_calls(log)
    assert (start["hook"], start["channel"], start["trigger"]) == (
        "on_run_start",
        "http",
        "message",
    )
    assert (start["tenant"], start["sessionId"]) == ("default", body(done)["sessionId"])
    assert (finish["hook"], finish["text"]) == ("on_run_finish", body(done)["text"])


def test_a_scheduled_run_fires_both_hooks_on_schedule(lambdas: Lambdas, log: Path) -> None:
    done = lambdas.invoke("message", load_event("schedule_daily_digest"))

    assert done["status"] == "finished"
    calls = hook_calls(log)
    assert [(c["hook"], c["agent"], c["channel"]) for c in calls] == [
        ("on_run_start", "daily-digest", "schedule"),
        ("on_run_finish", "daily-digest", "schedule"),
    ]


def test_the_finish_of_a_paused_run_fires_in_the_resolve_function(
    lambdas: Lambdas, log: Path
) -> None:
    paused = lambdas.invoke("message", load_event("message_post"))
    assert paused["statusCode"] == 202, paused["body"]
    assert [c["hook"] for c in hook_calls(log)] == ["on_run_start"], "no finish at the pause"

    done = lambdas.invoke("resolve", load_event("approval_approve", PENDING_ID=body(paused)["id"]))

    assert done["statusCode"] == 200, done["body"]
    calls = hook_calls(log)
    assert [(c["hook"], c.get("trigger")) for c in calls] == [
        ("on_run_start", "message"),
        ("on_run_start", "resolution"),
        ("on_run_finish", None),
    ]
    assert calls[-1]["text"] == body(done)["text"] and calls[-1]["channel"] == "http"


def test_a_failing_hook_leaves_the_answer_as_it_was(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, log: Path
) -> None:
    deployed_at(monkeypatch, agents_with_hooks(tmp_path, log, mode="fail"))
    handler = import_handler("message")

    event = load_event("message_post")
    event["body"] = json.dumps({"message": WHERE})
    event["headers"]["content-length"] = str(len(event["body"].encode()))
    done = Lambdas(handler, handler, MemoryContinuations(), aws).invoke("message", event)

    assert done["statusCode"] == 200, done["body"]
    assert body(done)["text"] == "Order A-1001 is delivered with PostNL."
    assert len(hook_calls(log)) == 2


def test_tenant_for_maps_the_verified_key_and_ignores_a_clients_tenant_header(
    lambdas: Lambdas, log: Path
) -> None:
    acme = key_for(lambdas, "acme")

    # a client with acme's key claims another tenant in the header its hook would read
    done = message(
        lambdas, {"message": WHERE}, headers={"x-api-key": acme, "x-tenant-id": "globex"}
    )

    assert done["statusCode"] == 200, done["body"]
    record = lambdas.api.sessions.load(body(done)["sessionId"])
    assert record is not None and record.tenant == "acme-eu", "the key's tenant, as mapped"
    assert {c["tenant"] for c in hook_calls(log)} == {"acme-eu"}


def test_a_clients_tenant_header_opens_no_session_of_that_tenant(lambdas: Lambdas) -> None:
    globex, acme = key_for(lambdas, "globex"), key_for(lambdas, "acme")
    theirs = message(lambdas, {"message": WHERE}, headers={"x-api-key": globex})
    session = body(theirs)["sessionId"]
    before = lambdas.api.sessions.load(session)

    intruder = {"x-api-key": acme, "x-tenant-id": "globex"}
    again = message(lambdas, {"message": WHERE, "sessionId": session}, headers=intruder)
    status = load_event("session_status", SESSION_ID=session)
    status["headers"].update(intruder)
    read = lambdas.invoke("resolve", status)

    assert again["statusCode"] == 404 and read["statusCode"] == 404
    assert lambdas.api.sessions.load(session) == before, "the session is unchanged"


def test_session_id_for_picks_the_session_and_it_stays_its_tenants(lambdas: Lambdas) -> None:
    first = message(lambdas, {"message": WHERE, "orderId": "A-1001"})
    again = message(lambdas, {"message": "and now?", "orderId": "A-1001"})

    assert body(first)["sessionId"] == body(again)["sessionId"] == "order-A-1001"
    # the same order id in another tenant names the same session, which is not theirs
    acme = key_for(lambdas, "acme")
    other = message(lambdas, {"message": WHERE, "orderId": "A-1001"}, headers={"x-api-key": acme})
    assert other["statusCode"] == 404


def test_a_resumed_decision_by_api_key_uses_the_mapped_tenant(lambdas: Lambdas, log: Path) -> None:
    acme = key_for(lambdas, "acme")
    event = load_event("message_post")
    event["headers"]["x-api-key"] = acme
    paused = lambdas.invoke("message", event)
    assert paused["statusCode"] == 202, paused["body"]
    assert lambdas.api.pending.get(body(paused)["id"]).tenant == "acme-eu"

    approve = load_event("approval_approve", PENDING_ID=body(paused)["id"])
    approve["headers"]["x-api-key"] = acme
    done = lambdas.invoke("resolve", approve)

    assert done["statusCode"] == 200, done["body"]
    assert named(hook_calls(log), "on_run_finish")[0]["tenant"] == "acme-eu"


def test_a_tenant_for_that_raises_refuses_the_request_and_runs_nothing(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, log: Path
) -> None:
    agents = agents_with_hooks(tmp_path, log)
    hooks = agents / "customer-service" / "hooks.py"
    broken = "def tenant_for(headers):\n    raise KeyError('authorization')\n\n\ndef _old("
    hooks.write_text(hooks.read_text().replace("def tenant_for(", broken))
    deployed_at(monkeypatch, agents)
    handler = import_handler("message")

    refused = Lambdas(handler, handler, MemoryContinuations(), aws).invoke(
        "message", load_event("message_post")
    )

    assert refused["statusCode"] == 500 and body(refused)["error"] == "agent_misconfigured"
    assert hook_calls(log) == [], "no turn ran under a guessed tenant"
