"""actauth 0.0.4 (loopengine's rule engine, a dev-extra reference) deciding one call.

The independent reference the gate is compared with: the parity test, and the
expected sets of a rules replay (``tests/unit/approvals/test_rules_replay.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import actauth

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from signoff.gate import Scope

__all__ = ["actauth_decides"]


class _Recorder(actauth.Approver):
    """An approver that records the reason it was asked with and answers at once."""

    def __init__(self) -> None:
        self.reason: str | None = None

    async def request_approval(
        self, tool: str, args: dict[str, Any], scope: actauth.Scope, reason: str
    ) -> bool:
        self.reason = reason
        return True


def _run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Drive a coroutine that never suspends (actauth's evaluate with _Recorder)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise AssertionError("actauth's evaluate suspended")


def actauth_decides(
    gate: actauth.Gate, tool: str, args: dict[str, Any], scope: Scope
) -> tuple[str, str, str | None]:
    """actauth's decision, reason and matched rule (an ask before anyone answers it)."""
    recorder = _Recorder()
    gate.approver = recorder
    where = actauth.Scope(tenant=scope.tenant, environment=scope.environment, agent=scope.agent)
    result = _run(gate.evaluate(tool, args, where))
    if recorder.reason is not None:
        return "ask", recorder.reason, result.matched_rule
    return result.decision.value, result.reason, result.matched_rule
