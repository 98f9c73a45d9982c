"""Gating: which calls of a batch run, which are refused, and which wait on a person.

The gate (``signoff.gate``, actauth's rules) decides each call in the order the
model made them: ``allow`` lets it run, ``deny`` refuses it, ``ask`` pauses the
turn on an approval. Each decision is an ``actauth:decision`` event (the journal
audits it). The model's ``ask_user`` pauses on a question, and the skill loader
is a system tool the rules do not govern. A call the rules do not deny whose
tool is unknown or whose arguments are invalid is answered with the error: it
neither runs nor asks anyone.

A call that will run gets its ``tool:started`` the instant it is decided (the
protocol's words): right after its ``allow``, or when a person approves it, so
before any call of its batch runs. ToolLane then runs the batch
(``signoff.engine.toollane``).

A person's resolution finishes what ``ask`` began: approved runs (with the
approver's changed arguments, when they changed some), denied is refused with
the person's reason (the turn then finishes as denied), an answer is the
question's result.
One refusal in a batch, by the rules or a person, skips every other call of it
that has no result yet: the batch was meant as a whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.approver.edits import describe_changes
from signoff.clock import iso
from signoff.engine import system_tools
from signoff.engine.pauses import Pause, approval_pending, question_pending
from signoff.engine.state import Answered, Approved, Denied
from signoff.errors import ResolutionError
from signoff.events import ActauthDecision, LoopSkipped, ToolStarted, tool_result
from signoff.gate import Scope, decide
from signoff.gate.policy import policy_of
from signoff.tools import ToolArgumentsInvalid

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.agents import Agent
    from signoff.clock import Clock
    from signoff.engine.state import CallState, Resolution, TurnState
    from signoff.events import ApprovalPending, LoopEvent, QuestionPending
    from signoff.gate.policy import ApprovalPolicy

    Emit = Callable[[LoopEvent], None]
    Pending = ApprovalPending | QuestionPending

__all__ = ["Gating"]


class Gating:
    """Applies the gate's and the people's decisions to the calls of one agent's turns."""

    def __init__(self, *, agent: Agent, clock: Clock, new_id: Callable[[], str]) -> None:
        self.agent = agent
        self.clock = clock
        self.new_id = new_id

    def gate(self, state: TurnState, emit: Emit) -> Pause | None:
        """Decide the batch's undecided calls in order, up to the first that pauses.

        Returns that pause, its pending event with the policy it waits under
        (``state`` then waits on its call), or None when every call is decided.
        """
        for cs in state.batch:
            if cs.status == "undecided":
                pending = self._gate_one(state, cs, emit)
                if pending is not None:
                    return pending
        return None

    def apply(self, cs: CallState, resolution: Resolution, emit: Emit) -> None:
        """Apply a person's resolution to the call ``cs`` the turn waits on.

        A deny on a question (the sweeper's: nobody answered in time) ends it unanswered.

        Raises:
            ResolutionError: an answer for an approval, or an approval for a question.
        """
        is_question = cs.call.name == system_tools.ASK_USER
        cs.decided_by = resolution.actor
        if isinstance(resolution, Answered):
            if not is_question:
                raise ResolutionError(f"call {cs.call.id!r} needs approve or deny, not an answer")
            cs.status, cs.answer = "done", resolution.answer
            cs.content, cs.status_text = resolution.answer, "Answered."
            emit(tool_result(cs.call, "Answered.", resolution.answer))
            return
        if is_question and isinstance(resolution, Denied):
            # nobody answered in time (expiry, an escalation ladder's end): the
            # question ends unanswered, and the turn with it, as after a deny
            cs.human_denied = True
            why = f" ({resolution.reason})" if resolution.reason else ""
            self._deny(cs, f"Not answered{why}.", emit)
            return
        if is_question:
            raise ResolutionError(f"call {cs.call.id!r} is a question; it needs an answer")
        if isinstance(resolution, Approved):
            cs.reason = f"{cs.reason}; approved by {resolution.actor}"
            if resolution.args is not None and resolution.args != cs.call.args:
                # a new decision on new arguments: the call runs with what the approver set
                cs.original_args = cs.call.args
                cs.call = cs.call.model_copy(update={"args": resolution.args})
                cs.reason += f" with changes: {describe_changes(cs.original_args, cs.call.args)}"
            self._allow(cs, emit)
            return
        assert isinstance(resolution, Denied)
        cs.human_denied = True
        why = f" ({resolution.reason})" if resolution.reason else ""
        self._deny(cs, f"Denied by {resolution.actor}{why}.", emit)

    def skip_if_denied(self, state: TurnState, emit: Emit) -> bool:
        """Skip the batch's other calls when one was denied; True when one was."""
        denied = [cs.call.name for cs in state.batch if cs.status == "denied"]
        if not denied:
            return False
        for cs in state.batch:
            if cs.status in ("denied", "done"):
                continue
            cs.status = "skipped"
            cs.content = (
                f"Skipped: not run because {', '.join(denied)} was denied in the same batch."
            )
            cs.is_error, cs.status_text = True, "Skipped."
            call = cs.call
            emit(LoopSkipped(name=call.name, denied_tools=denied))
            emit(tool_result(call, "Skipped."))
        return True

    # -- one call ---------------------------------------------------------------------

    def _gate_one(self, state: TurnState, cs: CallState, emit: Emit) -> Pause | None:
        """Decide one call; the pause when a person must answer."""
        call = cs.call
        blocked = any(other.status == "denied" for other in state.batch)
        if call.name == system_tools.ASK_USER:
            if blocked:
                cs.status = "allowed"  # skipped with its siblings
                return None
            cs.status = "awaiting"
            ladder = policy_of(agent_ladder=self.agent.config.escalate)
            return self._pause(state, cs, question_pending, ladder, emit)
        if call.name == system_tools.SKILL and self.agent.skills:
            cs.reason = "system tool"
            self._allow(cs, emit)
            return None
        scope = Scope(tenant=state.tenant, environment=state.environment, agent=state.agent)
        verdict = decide(self.agent.rules, call.name, call.args, scope)
        cs.decision = verdict.decision
        cs.reason = verdict.reason
        emit(ActauthDecision(tool=call.name, decision=verdict.decision, reason=verdict.reason))
        if verdict.decision == "deny":
            self._deny(cs, f"Denied: {verdict.reason}.", emit)
            return None
        if blocked:
            cs.status = "allowed"  # skipped with its siblings
            return None
        problem = self._invalid(cs)
        if problem is not None:
            cs.status = "done"
            cs.content, cs.is_error, cs.status_text = f"Error: {problem}", True, "Error."
            emit(tool_result(call, "Error.", problem))
            return None
        if verdict.decision == "allow":
            self._allow(cs, emit)
            return None
        cs.status = "awaiting"
        # the verdict's policy goes with the pause: nothing decides this call again
        policy = verdict.policy(agent_ladder=self.agent.config.escalate)
        return self._pause(state, cs, approval_pending, policy, emit)

    def _allow(self, cs: CallState, emit: Emit) -> None:
        """The call will run: its ``tool:started`` now, when it is decided, not when it runs.

        A call decided after a deny in its batch never gets here: it will be skipped.
        """
        cs.status = "allowed"
        call = cs.call
        emit(
            ToolStarted(
                id=call.id,
                tool=call.name,
                args=call.args,
                detail_text=cs.reason,
                original_args=cs.original_args,
            )
        )

    def _invalid(self, cs: CallState) -> str | None:
        tool = self.agent.tools.get(cs.call.name)
        if tool is None:
            known = ", ".join(sorted(self.agent.tools)) or "none"
            return f"unknown tool {cs.call.name!r}; available tools: {known}"
        try:
            tool.validate(cs.call.args)
        except ToolArgumentsInvalid as exc:
            return str(exc)
        return None

    def _pause(
        self,
        state: TurnState,
        cs: CallState,
        make: Callable[..., Pending],
        policy: ApprovalPolicy | None,
        emit: Emit,
    ) -> Pause:
        pending = make(state, cs, pending_id=self.new_id(), requested_at=iso(self.clock.now()))
        state.pending_id, state.awaiting_call = pending.id, cs.call.id
        emit(pending)
        return Pause(pending=pending, policy=policy)

    def _deny(self, cs: CallState, message: str, emit: Emit) -> None:
        cs.status = "denied"
        cs.content, cs.is_error, cs.status_text = message, True, "Denied."
        emit(tool_result(cs.call, "Denied.", message))
