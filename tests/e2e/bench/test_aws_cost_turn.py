"""bench/aws_cost.py's workload on the local stack: one approval turn, every request counted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("aws_cost", ROOT / "bench" / "aws_cost.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["aws_cost"] = module
    spec.loader.exec_module(module)
    return module


def test_one_approval_turn_is_recorded_by_function_service_and_operation() -> None:
    cost = _bench()
    # When the bench measures a warm approval turn (message, notify, link opened, approved)
    recorder = cost.measure(ROOT / "template.yaml")
    functions = [(i.function, i.trigger) for i in recorder.invocations]
    # Then it saw the message request, one notify batch, and the link's two page requests
    assert sorted(functions) == [
        ("MessageFunction", "http"),
        ("NotifierFunction", "sqs"),
        ("ResolveFunction", "http"),
        ("ResolveFunction", "http"),
    ]
    requests = recorder.requests
    # And the pause was queued once and the approval mailed once (the webhook is no AWS call)
    assert requests[("MessageFunction", "sqs", "SendMessage")] == 1
    assert requests[("NotifierFunction", "sesv2", "SendEmail")] == 1
    # And every function that keeps state wrote DynamoDB capacity the recorder computed
    assert {"MessageFunction", "ResolveFunction"} <= set(recorder.wru)
    assert all(units > 0 for units in recorder.wru.values())
    assert sum(recorder.rru.values()) > 0
    # And the recorder was taken out again: botocore's request path is its own
    from botocore.client import BaseClient

    assert BaseClient._make_api_call.__qualname__ == "BaseClient._make_api_call"
