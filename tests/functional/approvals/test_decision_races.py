"""Fifty people deciding one pending item at once, on moto with DynamoDB's transaction
conflicts put back (tests/support/conflicts.py): exactly one decision wins, and every
other click is answered from the state that won — a 409 with the status, or the
vote's progress — never a 5xx (conflicts are answers, not outages).

Each click of the race, by a person with an API key of their own, runs in a thread
of its own what the approve route runs (``signoff.api.decisions``: the item, who
decides it, ``Turns.decide``), and its answer is what the API's one status table
makes of the outcome (``signoff.api.errors``). The
handler itself cannot take fifty requests at once in one process: Powertools keeps
the current request on the resolver and its module-level routers, and a Lambda
instance serves one request at a time. So the clicks after the race, and a click
that keeps losing to a writer holding the item, go through the resolve handler.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Literal

import pytest
import yaml

from signoff.api.authorize import decider_for
from signoff.api.errors import error_payload
from signoff.api.shapes import vote_response
from signoff.durable.decide import verdict_of
from signoff.keys.api_keys import new_api_key
from signoff.store import keys
from signoff.store.dynamodb.table import CONFLICT_TRIES
from tests.conftest import ROOT
from tests.functional.api.test_handlers import with_body
from tests.support.conflicts import conflicting_dynamodb
from tests.support.lambdas import Lambdas, body, deployed_at, imported_lambdas, load_event

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.support.aws import AwsResources
    from tests.support.conflicts import Conflicts

CLICKS = 50
RULE = "refund-production-needs-approval"

Answer = tuple[int, dict[str, Any]]
Decision = Literal["approve", "deny"]


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads far more often than usual, so the clicks really interleave."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)


@pytest.fixture
def conflicts(aws: AwsResources, monkeypatch: pytest.MonkeyPatch) -> Conflicts:
    # after ``aws``: a conflict is decided before moto's one-at-a-time queue
    return conflicting_dynamodb(monkeypatch)


def deploy(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, approvals: int
) -> Lambdas:
    """The handlers, with the production refund rule needing ``approvals`` approvals."""
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    if approvals > 1:
        rules_file = agents / "customer-service" / "actauth.yml"
        rules = yaml.safe_load(rules_file.read_text())
        [rule] = [r for r in rules["rules"] if r.get("name") == RULE]
        rule["approvals"] = approvals
        rules_file.write_text(yaml.safe_dump(rules))
    deployed_at(monkeypatch, agents)
    return imported_lambdas(aws)


def pause(lambdas: Lambdas) -> dict[str, Any]:
    response = lambdas.invoke("message", load_event("message_post"))
    assert response["statusCode"] == 202, response["body"]
    paused: dict[str, Any] = body(response)
    return paused


def click(lambdas: Lambdas, pending_id: str, decision: str = "approve") -> dict[str, Any]:
    """One decision through the resolve handler (``POST /approvals/{id}/<decision>``)."""
    event = load_event(f"approval_{decision}", PENDING_ID=pending_id)
    return lambdas.invoke("resolve", with_body(event, {}))


def race(lambdas: Lambdas, pending_id: str, decisions: list[Decision]) -> list[Answer]:
    """Decide ``pending_id`` from one thread per decision at once, each by a person of
    their own; each one's answer."""
    api = lambdas.api
    keys = []
    for number in range(len(decisions)):
        clear, key = new_api_key("default", f"approver {number}", time.time())
        api.api_keys.add(key)
        keys.append(clear)
    start = threading.Barrier(len(decisions))
    answers: list[Answer | None] = [None] * len(decisions)

    def decide(number: int) -> None:
        decision = decisions[number]
        start.wait()
        try:
            # what the approve route does, but for its resolver (the module's docstring)
            item = api.pending.get(pending_id)
            headers = {"x-api-key": keys[number]}
            actor, check = decider_for(api, item, decision, headers=headers, token=None)
            decided = api.turns.decide(
                item.id,
                verdict_of(decision, None),
                actor,
                check=check,
                schedule=lambdas.continuations.schedule,
                resume=False,  # the turn goes on through its continuation, drained later
            )
        except Exception as error:  # every outcome is an answer, as the route gives it
            answers[number] = error_payload(error)
            return
        item = decided.item
        if item.status == "pending":
            answers[number] = vote_response(item)
        else:
            answers[number] = 200, {"status": item.status, "resolvedBy": item.resolved_by}

    threads = [threading.Thread(target=decide, args=(n,)) for n in range(len(decisions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert None not in answers
    return [answer for answer in answers if answer is not None]


def by_status(answers: list[Answer]) -> dict[int, list[dict[str, Any]]]:
    grouped: dict[int, list[dict[str, Any]]] = {}
    for status, payload in answers:
        grouped.setdefault(status, []).append(payload)
    return grouped


def lost_races(refused: list[dict[str, Any]], status: str, winner: str) -> None:
    """Every refusal is a lost race, answered with the state that won."""
    for payload in refused:
        assert payload["error"] in {"already_resolved", "conflict"}, payload
        if payload["error"] == "already_resolved":
            assert (payload["current"]["status"], payload["current"]["resolvedBy"]) == (
                status,
                winner,
            )


def decisions_audited(lambdas: Lambdas, session_id: str) -> list[tuple[str, str, str]]:
    entries = lambdas.api.turns.audit.for_subject(session_id)
    return [(e.kind, e.decision, e.actor) for e in entries if e.kind in {"human", "vote"}]


@pytest.mark.usefixtures("busy_switching")
def test_fifty_clicks_on_one_approval_one_wins_and_the_others_hear_409(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, conflicts: Conflicts
) -> None:
    lambdas = deploy(aws, monkeypatch, tmp_path, approvals=1)
    paused = pause(lambdas)

    decisions: list[Decision] = ["approve" if n % 2 else "deny" for n in range(CLICKS)]
    answers = by_status(race(lambdas, paused["id"], decisions))

    assert sorted(answers) == [200, 409], {s: len(a) for s, a in answers.items()}
    [won] = answers[200]
    assert len(answers[409]) == CLICKS - 1
    lost_races(answers[409], won["status"], won["resolvedBy"])
    # the race went through DynamoDB's conflicts, not only through its conditions
    assert conflicts.counts["cancelled"] > 0, conflicts.counts
    item = lambdas.api.pending.get(paused["id"])
    assert (item.status, item.resolved_by) == (won["status"], won["resolvedBy"])
    assert decisions_audited(lambdas, paused["sessionId"]) == [
        ("human", won["status"], won["resolvedBy"])
    ]
    assert lambdas.continuations.drain() == [paused["sessionId"]], "the turn continues once"
    # a click after the race, through the handler: the state that won, as a 409
    late = click(lambdas, paused["id"])
    assert late["statusCode"] == 409, late["body"]
    assert body(late)["current"]["resolvedBy"] == won["resolvedBy"]


@pytest.mark.usefixtures("busy_switching")
def test_fifty_voters_on_a_two_approval_item_reach_the_quorum_once(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, conflicts: Conflicts
) -> None:
    lambdas = deploy(aws, monkeypatch, tmp_path, approvals=2)
    paused = pause(lambdas)

    answers = by_status(race(lambdas, paused["id"], ["approve"] * CLICKS))

    assert sorted(answers) == [200, 202, 409], {s: len(a) for s, a in answers.items()}
    [first], [won] = answers[202], answers[200]
    assert len(answers[409]) == CLICKS - 2
    assert first["approvals"]["line"].startswith("1 of 2 approvals")
    assert won["status"] == "approved"
    lost_races(answers[409], "approved", won["resolvedBy"])
    assert conflicts.counts["cancelled"] > 0, conflicts.counts
    item = lambdas.api.pending.get(paused["id"])
    assert item.status == "approved" and item.vote_count == 2
    [voter] = [v.actor for v in item.votes if v.actor != won["resolvedBy"]]
    assert decisions_audited(lambdas, paused["sessionId"]) == [
        ("vote", "approve", voter),
        ("human", "approved", won["resolvedBy"]),
    ]
    assert lambdas.continuations.drain() == [paused["sessionId"]], "the quorum resumes once"
    late = click(lambdas, paused["id"])
    assert late["statusCode"] == 409, late["body"]
    assert body(late)["error"] == "already_resolved"


def test_a_click_that_keeps_losing_to_another_writer_is_a_409_and_decides_nothing(
    aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, conflicts: Conflicts
) -> None:
    lambdas = deploy(aws, monkeypatch, tmp_path, approvals=1)
    paused = pause(lambdas)
    before = dict(conflicts.counts)

    with conflicts.hold(keys.pending_key(paused["id"])):
        refused = click(lambdas, paused["id"])

    assert refused["statusCode"] == 409, refused["body"]
    assert body(refused)["error"] == "conflict"
    assert "decide again" in body(refused)["detail"]
    # the table tried each of the two transactions CONFLICT_TRIES times
    assert conflicts.counts["cancelled"] - before.get("cancelled", 0) == 2 * CONFLICT_TRIES
    assert lambdas.api.pending.get(paused["id"]).status == "pending"
    assert decisions_audited(lambdas, paused["sessionId"]) == []
    # the writer is done: the same click decides
    done = click(lambdas, paused["id"])
    assert done["statusCode"] == 200, done["body"]
    assert lambdas.api.pending.get(paused["id"]).status == "approved"
