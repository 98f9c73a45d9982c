"""The local stack fuzzed from its own ``/openapi.json`` by schemathesis: every route, with
schema-valid and schema-breaking requests, with a valid API key and without one.

Each response must be no server error, have a status the document lists for its route,
a documented content type, and a body valid against the documented schema. The pass is
bounded by a count, never by the clock: at most ``EXAMPLES`` cases per route, mode and
caller, derandomized (the same cases on every run), no deadline. Every route is fuzzed
however slow the machine is — a loaded CI machine takes longer, it does not cover less —
and the pass adds under a minute to ``make test`` on a quiet one. The scripted model
answers turns at once, so a generated message never waits on a provider.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from signoff.keys.api_keys import new_api_key
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    from schemathesis import APIOperation, Case

    from signoff_dev.local.stack import LocalStack

pytestmark = pytest.mark.slow

EXAMPLES = 15
# The sample agent whose turns run (scripted model): routes with {name} are fuzzed at it too.
AGENT = "customer-service"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# Schema-breaking data must be refused with a 4xx, never taken.
NEGATIVE_CHECKS = [*CHECKS, negative_data_rejection]
MODES = (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
# Every refusal the API documents counts as rejecting schema-breaking data (schemathesis'
# default list lacks 410 and 413: an oversized negative body is refused as too large).
CONFIG = """
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "409", "410", "413", "415"]
"""


def _fuzz(
    operation: APIOperation,
    stack: LocalStack,
    headers: dict[str, str],
    mode: Any,
    path_parameters: dict[str, str] | None = None,
) -> int | None:
    """Run ``EXAMPLES`` cases of ``operation`` in ``mode``; how many ran (None: the
    mode has no case to send)."""
    ran = 0
    checks = NEGATIVE_CHECKS if mode.is_negative else CHECKS

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode, path_parameters=path_parameters))
    def run(case: Case) -> None:
        nonlocal ran
        ran += 1
        case.call_and_validate(base_url=stack.url, headers=headers, checks=checks, timeout=30)

    try:
        run()
    except Unsatisfiable:
        # Nothing of the route can break its schema (string path parameters, no body):
        # its negative pass has no case to send.
        if not mode.is_negative:
            raise
        return None
    return ran


def test_every_route_answers_as_its_openapi_document_says(stack: LocalStack) -> None:
    # Given the stack's served document, and a valid API key of the default tenant
    schema = schemathesis.openapi.from_url(
        f"{stack.url}/openapi.json", config=schemathesis.Config.from_str(CONFIG)
    )
    clear, record = new_api_key("default", "fuzz", time.time())
    stack.message_api().api_keys.add(record)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 13, "every route of the API is in the document"
    # When each route is fuzzed, with the key and without one (the anonymous caller)
    cases: dict[str, int] = {}
    # A mode with no case to send for a route has none for either caller (the cases are
    # generated from the route alone): it is looked for once, not twice.
    unbreakable: set[str] = set()
    for operation in operations:
        cases[operation.label] = 0
        # From the stack's own origin, as its pages send: the local guard lets the link
        # form through to its handler (a cross-site form is the guard's own test).
        for headers in ({"x-api-key": clear, "origin": stack.url}, {"origin": stack.url}):
            for mode in MODES:
                if mode.is_negative and operation.label in unbreakable:
                    continue
                ran = _fuzz(operation, stack, headers, mode)
                if ran is None:
                    unbreakable.add(operation.label)
                cases[operation.label] += ran or 0
            if "{name}" in operation.path:  # a real agent: turns run, sessions exist
                cases[operation.label] += (
                    _fuzz(operation, stack, headers, MODES[0], {"name": AGENT}) or 0
                )
    # Then every check held (a failure raises above), and every route was sent cases
    assert [label for label, sent in cases.items() if not sent] == []
    print(f"schemathesis: {sum(cases.values())} cases over {len(cases)} routes")
    assert sum(cases.values()) >= 100
