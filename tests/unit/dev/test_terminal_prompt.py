"""The terminal's approval prompt shows the arguments as JSON, not a Python dict (issue 11)."""

from __future__ import annotations

import io
import json

from signoff.engine import Approved, Denied
from signoff.events import ApprovalPending, PendingScope
from signoff_dev.cli.approvers import TerminalApprover


def pending() -> ApprovalPending:
    return ApprovalPending(
        id="p1",
        tool="issue_refund",
        args={"orderId": "A-1001", "amount": 42.0, "note": "张三", "paid": True, "ref": None},
        scope=PendingScope(tenant="default", environment="production", agent="customer-service"),
        reason="matched rule 'refund-production-needs-approval'",
        requested_at="2026-01-01T00:00:00Z",
    )


def test_the_prompt_shows_the_arguments_as_json_and_the_rule() -> None:
    out = io.StringIO()
    approver = TerminalApprover(io.StringIO("maybe\ny\n"), out)

    decided = approver(pending(), "call_1")

    assert decided == Approved(call_id="call_1", actor="terminal")
    shown = out.getvalue()
    head, _, rest = shown.partition("  arguments of issue_refund:\n")
    assert head == (
        # without a summary template, the arguments as one readable line (signoff.approver.card)
        "Approve? Issue refund: orderId A-1001, amount 42.0, note 张三, paid true, ref null\n"
        "  why it asks: matched rule 'refund-production-needs-approval'\n"
        "  for: agent customer-service · tenant default · production\n"
    )
    body = rest[: rest.index("}\n") + 1]
    assert json.loads(body) == pending().args  # JSON: true/null, not True/None
    assert "'orderId'" not in shown and "张三" in shown
    assert shown.count("Approve issue_refund? [y/n] ") == 2  # asked again after "maybe"


def test_no_is_a_denial() -> None:
    approver = TerminalApprover(io.StringIO("n\n"), io.StringIO())
    assert approver(pending(), "call_1") == Denied(call_id="call_1", actor="terminal")


def test_the_prompt_is_headed_by_the_tools_summary_with_hidden_characters_escaped() -> None:
    out = io.StringIO()
    hostile = pending().model_copy(update={"args": {"orderId": "A-10\u202e01", "amount": 42.0}})
    approver = TerminalApprover(
        io.StringIO("y\n"), out, {"issue_refund": "Refund {amount:.2f} USD on order {orderId}"}
    )

    approver(hostile, "call_1")

    shown = out.getvalue()
    assert shown.startswith("Approve? Refund 42.00 USD on order A-10\\u202e01\n")
    assert "\u202e" not in shown
