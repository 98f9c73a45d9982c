"""Twenty approvers vote at once on an item that needs two, on the local stack over HTTP:
one vote is recorded short of the quorum, exactly one reaches it and resumes the turn
(the refund runs once), and the other eighteen are told it was already decided."""

from __future__ import annotations

import shutil
import threading
import time
from typing import TYPE_CHECKING, Any

import httpx
import yaml

from signoff.keys.api_keys import new_api_key
from tests.conftest import ROOT
from tests.support.local_stack import REFUND, WAIT, finished, running_stack

if TYPE_CHECKING:
    from pathlib import Path

VOTERS = 20


def test_twenty_simultaneous_approvers_resume_the_turn_exactly_once(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    rules_file = agents / "customer-service" / "actauth.yml"
    rules = yaml.safe_load(rules_file.read_text())
    [rule] = [r for r in rules["rules"] if r.get("name") == "refund-production-needs-approval"]
    rule["approvals"] = 2
    rules_file.write_text(yaml.safe_dump(rules))

    with running_stack(agents) as stack, httpx.Client(base_url=stack.url, timeout=WAIT) as http:
        keys = []
        for number in range(VOTERS):
            clear, record = new_api_key("default", f"approver {number}", time.time())
            stack.message_api().api_keys.add(record)
            keys.append(clear)
        sent = http.post("/agents/customer-service/messages", json={"message": REFUND})
        assert sent.status_code == 202, sent.text
        paused = sent.json()
        start = threading.Barrier(VOTERS)
        answers: list[httpx.Response] = []

        def approve(key: str) -> None:
            with httpx.Client(base_url=stack.url, timeout=WAIT) as client:
                start.wait()
                answers.append(
                    client.post(f"/approvals/{paused['id']}/approve", headers={"x-api-key": key})
                )

        threads = [threading.Thread(target=approve, args=(key,)) for key in keys]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        codes = sorted(answer.status_code for answer in answers)
        assert codes == [200] + [202] + [409] * (VOTERS - 2), [a.text for a in answers]
        [short] = [a.json() for a in answers if a.status_code == 202]
        assert short["approvals"]["line"].startswith("1 of 2 approvals — apikey:")
        assert {a.json()["error"] for a in answers if a.status_code == 409} == {"already_resolved"}
        [resumed] = [a.json() for a in answers if a.status_code == 200]
        assert resumed["text"].startswith("Refunded 42")
        status: dict[str, Any] = finished(http, paused)
        started = [
            e
            for e in status["events"]
            if e["type"] == "tool:started" and e.get("tool") == "issue_refund"
        ]
        assert len(started) == 1, "the refund ran once"
        assert [d["decision"] for d in status["decisions"]] == ["approved"]
