"""Live approvers for the terminal: one that asks, one that answers from flags."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from signoff.approver.card import summarize
from signoff.approver.display import visible
from signoff.engine import Answered, Approved, Denied
from signoff.errors import UsageError
from signoff.events import ApprovalPending, QuestionPending

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.engine import Resolution

__all__ = ["FlagApprover", "TerminalApprover"]


@dataclass(frozen=True)
class TerminalApprover:
    """Asks on the terminal and waits for the answer.

    An approval is shown as its decision card (``signoff.approver.card``): the summary (from
    ``summaries``, each tool's ``summary`` template by name), why it asks, for whom,
    then the arguments as JSON. Model text is shown with hidden characters escaped.
    """

    tty_in: TextIO
    tty_out: TextIO
    summaries: Mapping[str, str | None] = field(default_factory=dict)

    def __call__(self, pending: ApprovalPending | QuestionPending, call_id: str) -> Resolution:
        if isinstance(pending, QuestionPending):
            options = f" [{' / '.join(pending.options)}]" if pending.options else ""
            answer = self._ask(f"{pending.question}{options}\n> ")
            return Answered(call_id=call_id, answer=answer, actor="terminal")
        # The arguments as JSON, one per line: what the tool will be called with,
        # in the form the API, the link page and `--json` show them.
        args = json.dumps(pending.args, indent=2, ensure_ascii=False)
        summary = summarize(self.summaries.get(pending.tool), pending.tool, pending.args)
        scope = pending.scope
        self.tty_out.write(
            f"Approve? {visible(summary, lines=False)}\n"
            f"  why it asks: {visible(pending.reason, lines=False)}\n"
            f"  for: agent {scope.agent} · tenant {scope.tenant} · {scope.environment}\n"
            f"  arguments of {visible(pending.tool, lines=False)}:\n{visible(args)}\n"
        )
        while True:
            reply = self._ask(f"Approve {pending.tool}? [y/n] ").strip().lower()
            if reply in ("y", "yes"):
                return Approved(call_id=call_id, actor="terminal")
            if reply in ("n", "no"):
                return Denied(call_id=call_id, actor="terminal")

    def _ask(self, prompt: str) -> str:
        self.tty_out.write(prompt)
        self.tty_out.flush()
        line = self.tty_in.readline()
        if not line:
            raise UsageError("the terminal closed before a decision was given")
        return line.rstrip("\n")


@dataclass(frozen=True)
class FlagApprover:
    """Answers from ``--approve`` / ``--deny`` (with ``--reason``) / ``--answer``; refuses
    what they don't cover."""

    decision: str | None
    answer: str | None
    reason: str = ""

    def __call__(self, pending: ApprovalPending | QuestionPending, call_id: str) -> Resolution:
        if isinstance(pending, QuestionPending):
            if self.answer is None:
                raise UsageError(
                    f"the agent asks {pending.question!r} and there is no terminal to answer on;"
                    " rerun with --answer TEXT"
                )
            return Answered(call_id=call_id, answer=self.answer, actor="cli-flag")
        if self.decision == "approve":
            return Approved(call_id=call_id, actor="cli-flag")
        if self.decision == "deny":
            return Denied(call_id=call_id, actor="cli-flag", reason=self.reason)
        raise UsageError(
            f"{pending.tool} needs approval ({pending.reason}) and there is no terminal to ask on;"
            " rerun with --approve or --deny (it was not run)"
        )
