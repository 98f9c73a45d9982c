"""Assert a rules change in a project's CI: ``replay_rules`` over a store's recorded calls.

::

    from signoff.testing import replay_rules

    def test_new_rules_guard_no_less(store):      # a store holding recorded turns
        new = "agents/refunds/actauth.yml"
        replay = replay_rules(store, "refunds", new, since=timedelta(days=30))
        assert not replay.less_guarded, [c.call.summary for c in replay.less_guarded]

The same function as ``signoff rules replay`` (``signoff.approvals.replay``).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from signoff.approvals.replay import Replay
from signoff.approvals.replay import replay_rules as _replay
from signoff.gate import RuleSet, load_rules, rules_from

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.store.base import GatedSessions, PendingReader

__all__ = ["Replay", "replay_rules"]


class _Store(Protocol):
    """A store (``MemoryStore``, ``DynamoStore``): its sessions' logs and pending items."""

    @property
    def sessions(self) -> GatedSessions: ...

    @property
    def pending(self) -> PendingReader: ...


def replay_rules(
    store: _Store,
    agent: str,
    rules: RuleSet | Path | str | Mapping[str, Any],
    *,
    since: float | datetime | timedelta = timedelta(days=7),
    until: float | datetime | None = None,
    tenant: str | None = None,
) -> Replay:
    """Decide ``agent``'s recorded calls in ``store`` again with ``rules`` and list the changes.

    ``rules`` is a rule set, the path of an ``actauth.yml``, or its mapping (as parsed
    YAML). ``since`` is a time or how long before ``until`` (default now); times are
    epoch seconds or aware datetimes.

    Raises:
        ConfigError: the rules do not load (the error names the file, rule and field).
    """
    if isinstance(rules, str | Path):
        rule_set = load_rules(Path(rules), agent)
    elif isinstance(rules, RuleSet):
        rule_set = rules
    else:
        rule_set = rules_from(rules, "<rules>", agent)
    end = time.time() if until is None else _epoch(until)
    start = end - since.total_seconds() if isinstance(since, timedelta) else _epoch(since)
    return _replay(
        store.sessions,
        store.pending,
        agent,
        rule_set,
        since=start,
        until=end,
        tenant=tenant,
    )


def _epoch(when: float | datetime) -> float:
    return when.timestamp() if isinstance(when, datetime) else float(when)
