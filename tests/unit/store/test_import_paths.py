"""What reading pending items and outbox rows imports: no engine, no rule engine, no events.

The notifier's cold start loads only the records it reads (issue 27): a pending
item and its outbox rows (``signoff.store.pending_records``), the two ports over
them (built by ``DynamoStore`` on first use), and the wiring of the notifier
itself. Each check runs in a fresh interpreter, so what an earlier test imported
cannot hide an import.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT

# What a notifier never runs: a turn, the gate's rules, the loop events, a session.
HEAVY = (
    "signoff.engine",
    "signoff.gate.conditions",
    "signoff.gate.decision",
    "signoff.gate.lint",
    "signoff.gate.rules",
    "signoff.events",
    "signoff.messages",
    "signoff.store.session_records",
    "signoff.store.sessions",
)


def loaded_after(script: str) -> set[str]:
    """The signoff modules a fresh interpreter holds after running ``script``."""
    report = "import json, sys; print(json.dumps([m for m in sys.modules if 'signoff' in m]))"
    code = textwrap.dedent(script) + "\n" + report
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    return {m for m in json.loads(result.stdout.splitlines()[-1]) if m.startswith("signoff.")}


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "script",
    [
        "import signoff.store.pending_records",
        "import signoff.store",
        "import signoff.gate.policy",
        "from signoff.store.codec import Codec",
        """
        from signoff.store.dynamodb import DynamoStore
        store = DynamoStore(None, "signoff", None)  # no client call is made
        store.pending, store.outbox
        """,
        "import signoff.aws.notifier",
    ],
    ids=["pending-records", "store-package", "gate-policy", "codec", "dynamo-ports", "notifier"],
)
def test_reading_pending_items_and_outbox_rows_loads_no_engine(script: str) -> None:
    assert heavy_in(loaded_after(script)) == []


def test_the_check_sees_a_heavy_import() -> None:
    # guards against a check that cannot fail: a session's ports load the session records
    script = """
    from signoff.store.dynamodb import DynamoStore
    DynamoStore(None, "signoff", None).sessions
    """
    assert {"signoff.store.session_records", "signoff.engine.state"} <= set(
        heavy_in(loaded_after(script))
    )


def test_the_lazy_names_are_the_modules_own_whatever_was_imported_first() -> None:
    # PEP 562 re-exports: a submodule imported first must not shadow a name (decide)
    loaded_after(
        """
        import signoff.gate.decision, signoff.store.pending_records
        from signoff.gate import RuleSet, decide
        from signoff.gate.rules import RuleSet as Rules
        from signoff.store import Commit, PendingItem
        from signoff.store.session_records import Commit as Written
        assert decide is signoff.gate.decision.decide and callable(decide)
        assert (RuleSet, Commit) == (Rules, Written)
        assert PendingItem is signoff.store.pending_records.PendingItem
        """
    )
