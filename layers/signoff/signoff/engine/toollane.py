"""ToolLane: runs the allowed calls of one batch.

Consecutive ``safe`` calls run together on a bounded thread pool; every other
call runs alone, in order. Events come out in call order either way, so the
same batch always produces the same event sequence. A call's ``tool:started``
was emitted when it was decided (``signoff.engine.gating``); here a call is
marked ``started`` as it is handed to its runner, which a checkpoint records
before a call that is not ``safe`` runs (a crash during it is then detectable).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from signoff.approver.edits import describe_changes
from signoff.events import ToollaneResult, tool_result

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import ThreadPoolExecutor

    from signoff.engine.state import CallState
    from signoff.events import LoopEvent

__all__ = ["ToolRun", "encode_result", "run_lane", "summarize"]

SUMMARY_CHARS = 200


@dataclass(frozen=True, kw_only=True)
class ToolRun:
    """What the lane needs to run one call: its state and a runnable."""

    state: CallState
    safe: bool
    run: Callable[[], tuple[str, bool, list[LoopEvent]]]  # (content, is_error, extra events)


def run_lane(
    runs: list[ToolRun],
    *,
    pool: ThreadPoolExecutor,
    emit: Callable[[LoopEvent], None],
    before_solo: Callable[[CallState], None],
    out_of_time: Callable[[], bool],
) -> bool:
    """Run ``runs`` group by group; False if time ran out before a group started."""
    for group in _groups(runs):
        if out_of_time():
            return False
        for item in group:
            item.state.status = "started"
        if len(group) == 1:
            if not group[0].safe:
                before_solo(group[0].state)
            outcomes = [_guarded(group[0].run)]
        else:
            futures = [pool.submit(_guarded, item.run) for item in group]
            outcomes = [future.result() for future in futures]
        for item, (content, is_error, extra) in zip(group, outcomes, strict=True):
            for event in extra:
                emit(event)
            _finish(item.state, content, is_error, emit)
    return True


def _groups(runs: list[ToolRun]) -> list[list[ToolRun]]:
    groups: list[list[ToolRun]] = []
    for item in runs:
        if item.safe and groups and groups[-1][0].safe:
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _guarded(
    run: Callable[[], tuple[str, bool, list[LoopEvent]]],
) -> tuple[str, bool, list[LoopEvent]]:
    try:
        return run()
    except Exception as exc:  # a failing tool is a result for the model, not a crashed turn
        return f"{type(exc).__name__}: {exc}", True, []


def _finish(
    state: CallState, content: str, is_error: bool, emit: Callable[[LoopEvent], None]
) -> None:
    state.status = "done"
    state.content = content if not is_error else f"Error: {content}"
    if state.original_args is not None:
        # the model asked for other arguments: it reads what the approver changed
        changes = describe_changes(state.original_args, state.call.args)
        state.content = f"Approved with changes ({changes}).\n{state.content}"
    state.is_error = is_error
    state.status_text = "Error." if is_error else "Approved."
    call = state.call
    summary = summarize(content)
    emit(ToollaneResult(name=call.name, summary=("error: " if is_error else "ok: ") + summary))
    emit(tool_result(call, state.status_text, summary))


def summarize(content: str) -> str:
    """A one-line preview of a result for events and logs."""
    flat = " ".join(content.split())
    return flat if len(flat) <= SUMMARY_CHARS else flat[: SUMMARY_CHARS - 1] + "…"


def encode_result(value: Any) -> str:
    """A tool's return value as the text the model reads."""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":"))
