"""``signoff send`` against ``signoff dev``: the terminal's NDJSON from a running stack.

Issue 14's acceptance, as written: ``signoff send --url http://127.0.0.1:PORT
customer-service --json --deny "…"`` prints what ``signoff run --json --deny``
prints for the same scripted turn, session ids, pending ids and times and who
denied aside (tests/e2e/transport/test_transport_conformance.py normalises them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.conftest import ROOT
from tests.e2e.transport.test_transport_conformance import per_run, signoff
from tests.support.local_stack import http, stack  # noqa: F401 - fixtures

if TYPE_CHECKING:
    from pathlib import Path

    from signoff_dev.local.stack import LocalStack

REFUND = "Please refund order A-1001, it arrived broken"


def test_send_to_signoff_dev_prints_the_ndjson_of_run_with_deny(
    stack: LocalStack,  # noqa: F811
    tmp_path: Path,
) -> None:
    agents = ROOT / "agents"
    ran_code, ran = signoff(agents, tmp_path, "run", "customer-service", "--json", "--deny", REFUND)
    url = stack.url
    sent_code, sent = signoff(
        agents,
        tmp_path,
        "send",
        "--url",
        url,
        "customer-service",
        "--json",
        "--deny",
        "--reason",
        "no",
        REFUND,
    )
    assert sent_code == ran_code == 0
    assert [e["type"] for e in ran][-2:] == ["loop:denied", "done"]
    assert per_run(sent) == per_run(ran)
