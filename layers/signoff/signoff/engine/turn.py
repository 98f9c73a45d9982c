"""The turn engine: model → gate → tools → model … until done or a pause.

``Engine.start`` runs a new user message, ``Engine.resume`` continues a paused
turn with a human's resolution, ``Engine.proceed`` continues a turn that
yielded before its deadline. Each returns ``Finished``, ``Paused`` or
``Continue``; none of them blocks on a human. The conversation is a list the
caller owns: the engine only ever appends to it. Which calls of a batch run,
are refused or pause the turn is ``signoff.engine.gating``'s to say.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from signoff.budget import compact_start, estimate_tokens, window
from signoff.engine import stops, system_tools
from signoff.engine.gating import Gating
from signoff.engine.state import (
    CallState,
    Continue,
    Finished,
    Outcome,
    Paused,
    Resolution,
    TurnState,
)
from signoff.engine.toollane import ToolRun, encode_result, run_lane
from signoff.errors import (
    ModelOutOfTime,
    ModelRejected,
    ModelUnavailable,
    PromptTooLong,
    UnknownPending,
)
from signoff.events import (
    AssistantText,
    LoopDenied,
    LoopDone,
    LoopEvent,
    LoopMaxTurns,
    PromptCompaction,
    SkillLoaded,
)
from signoff.ids import new_id
from signoff.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    ToolResultMessage,
    UserMessage,
)
from signoff.tools import ToolContext

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.agents import Agent
    from signoff.clock import Clock
    from signoff.messages import ToolSpec
    from signoff.models.base import ModelCall
    from signoff.run_channels import RunChannel

__all__ = ["MAX_CUT_CALLS", "Engine"]

# Invocations in a row a model call may be cut at the end of, each continued in a
# fresh one; past that, the model is too slow for the function's timeout and the
# turn fails with the provider's error instead of continuing forever.
MAX_CUT_CALLS = 3


@dataclass(kw_only=True)
class _Run:
    """One call into the engine: the state it advances and what it emitted."""

    state: TurnState
    history: list[Message]
    sink: Callable[[LoopEvent], None] | None
    deadline: float | None
    checkpoint: Callable[[TurnState, list[Message]], None] | None = None
    events: list[LoopEvent] = field(default_factory=list)
    # what ran since the last checkpoint is not durable yet (a batch of safe calls)
    unsaved: bool = False

    def emit(self, event: LoopEvent) -> None:
        self.events.append(event)
        if self.sink is not None:
            self.sink(event)


class Engine:
    """Drives turns of one agent against one model.

    ``checkpoint`` (per call) is called with the state and the history whenever
    what happened so far must be durable: before a batch of calls runs (its model
    reply and the gate's decisions), before a call that is not ``safe`` runs (so a
    crash during it is detectable), and after a batch with such a call. A batch of
    safe calls is not checkpointed again after it ran: its results go with the next
    checkpoint, one write per step (a crash before it re-runs them, which a safe
    call allows), or with the outcome's commit; a failure raised on the way commits
    them first.
    """

    def __init__(
        self,
        *,
        agent: Agent,
        model: ModelCall,
        clock: Clock,
        new_id: Callable[[], str] = new_id,
        max_workers: int = 8,
        deadline_margin: float = 0.0,
        max_tokens: int = 1024,
    ) -> None:
        self.agent = agent
        self.model = model
        self.clock = clock
        self.new_id = new_id
        self.deadline_margin = deadline_margin
        self.max_tokens = max_tokens
        self._gating = Gating(agent=agent, clock=clock, new_id=new_id)
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="toollane")
        specs: list[ToolSpec] = [t.spec for t in agent.tools.values()]
        specs.append(system_tools.ask_user_spec())
        if agent.skills:
            specs.append(system_tools.skill_spec(sorted(agent.skills)))
        self._specs = tuple(specs)

    # -- the three entry points -------------------------------------------------------

    def start(
        self,
        *,
        history: list[Message],
        message: str,
        tenant: str,
        environment: str,
        session_id: str,
        run_id: str | None = None,
        sink: Callable[[LoopEvent], None] | None = None,
        deadline: float | None = None,
        checkpoint: Callable[[TurnState, list[Message]], None] | None = None,
        channel: RunChannel | None = None,
    ) -> Outcome:
        """Run a new user message to its end or its first pause (on ``channel``, recorded)."""
        # Made of validated parts, once a turn: unvalidated, a fresh process's first turn
        # builds no schema to check it. (What a step appends is validated: constructing
        # it unvalidated costs more per step than the schemas save once.)
        state = TurnState.model_construct(
            agent=self.agent.name,
            tenant=tenant,
            environment=environment,
            session_id=session_id,
            run_id=run_id or self.new_id(),
            channel=channel,
            task_at=len(history),
        )
        history.append(UserMessage(content=message))
        return self._drive(
            _Run(state=state, history=history, sink=sink, deadline=deadline, checkpoint=checkpoint)
        )

    def resume(
        self,
        state: TurnState,
        history: list[Message],
        resolution: Resolution,
        *,
        sink: Callable[[LoopEvent], None] | None = None,
        deadline: float | None = None,
        checkpoint: Callable[[TurnState, list[Message]], None] | None = None,
    ) -> Outcome:
        """Apply a human's resolution to a paused turn and run on.

        Raises:
            UnknownPending: the resolution is for a call the turn is not waiting on.
            ResolutionError: an answer for an approval, or a decision for a question.
        """
        state = state.model_copy(deep=True)
        run = _Run(
            state=state, history=history, sink=sink, deadline=deadline, checkpoint=checkpoint
        )
        if state.awaiting_call is None or resolution.call_id != state.awaiting_call:
            raise UnknownPending(resolution.call_id, state.awaiting_call)
        waiting = next(cs for cs in state.batch if cs.call.id == state.awaiting_call)
        self._gating.apply(waiting, resolution, run.emit)
        state.pending_id = None
        state.awaiting_call = None
        return self._drive(run)

    def proceed(
        self,
        state: TurnState,
        history: list[Message],
        *,
        sink: Callable[[LoopEvent], None] | None = None,
        deadline: float | None = None,
        checkpoint: Callable[[TurnState, list[Message]], None] | None = None,
    ) -> Outcome:
        """Continue a turn that returned ``Continue`` (or whose process died)."""
        state = state.model_copy(deep=True)
        return self._drive(
            _Run(state=state, history=history, sink=sink, deadline=deadline, checkpoint=checkpoint)
        )

    # -- the loop ---------------------------------------------------------------------

    def _drive(self, run: _Run) -> Outcome:
        try:
            return self._loop(run)
        except Exception:
            if run.unsaved:
                # what ran is kept as it would have been: a re-drive does not repeat it
                self._save(run)
            raise

    def _loop(self, run: _Run) -> Outcome:
        state = run.state
        while True:
            if state.batch:
                outcome = self._advance_batch(run)
                if outcome is not None:
                    return outcome
                continue
            if state.model_calls >= self.agent.max_turns:
                run.emit(LoopMaxTurns(max_turns=self.agent.max_turns))
                return Finished(
                    state=state, text=state.last_text, stop_reason="max_turns", events=run.events
                )
            if self._out_of_time(run):
                return Continue(state=state, events=run.events)
            try:
                response = self._call_model(run)
            except ModelUnavailable as exc:
                if not self._cut(run, exc):
                    raise
                # Nothing of the call is kept: a fresh invocation, with its whole
                # time, makes it again.
                state.cut_calls += 1
                return Continue(state=state, events=run.events)
            state.cut_calls = 0
            state.model_calls += 1
            if (refused := stops.refusal(response)) is not None:
                text = stops.refusal_text(response, refused)
                state.last_text = text
                run.history.append(AssistantMessage(content=text))
                run.emit(LoopDone(text=text, refused=refused))
                return Finished(state=state, text=text, events=run.events)
            if stops.is_unreadable(response):
                self._correct(run, response)
                continue
            if stops.is_empty_cut(response):
                # A reasoning model can spend the whole limit thinking: an empty answer
                # would pass for a finished turn.
                raise ModelRejected(
                    f"the model used its whole output limit (maxTokens {self.max_tokens}) "
                    "without answering; raise the agent's model.maxTokens",
                    provider=self.agent.config.model.provider,
                )
            state.corrections = 0
            if response.text:
                state.last_text = response.text
            if not response.tool_calls:
                run.history.append(AssistantMessage(content=response.text))
                run.emit(LoopDone(text=response.text))
                return Finished(state=state, text=response.text, events=run.events)
            if response.text:
                run.emit(AssistantText(text=response.text))
            run.history.append(
                AssistantMessage(content=response.text, tool_calls=response.tool_calls)
            )
            state.batch = [CallState(call=call) for call in response.tool_calls]

    def _correct(self, run: _Run, response: ModelResponse) -> None:
        """Tell the model its reply's tool calls could not be read; a bounded number of times.

        Raises:
            ModelRejected: more than ``stops.MAX_CORRECTIONS`` such replies in a row.
        """
        state = run.state
        state.corrections += 1
        if state.corrections > stops.MAX_CORRECTIONS:
            raise ModelRejected(
                f"the model's tool calls could not be read {state.corrections} times in a row "
                f"(last stop: {response.stop})",
                provider=self.agent.config.model.provider,
            )
        messages, events = stops.correction(response)
        if response.text:
            state.last_text = response.text
            run.emit(AssistantText(text=response.text))
        run.history.extend(messages)
        for event in events:
            run.emit(event)
        self._save(run)

    def _out_of_time(self, run: _Run) -> bool:
        return run.deadline is not None and self._left(run) <= 0

    def _cut(self, run: _Run, exc: ModelUnavailable) -> bool:
        """The call failed because the invocation's time ran out, and may be made again."""
        if run.deadline is None:
            return False
        if not isinstance(exc, ModelOutOfTime) and self._left(run) > 0:
            return False  # a provider failure with time left: Recovering gave up on it
        return run.state.cut_calls < MAX_CUT_CALLS

    def _left(self, run: _Run) -> float:
        """Seconds until the run must yield (infinite without a deadline)."""
        if run.deadline is None:
            return float("inf")
        return run.deadline - self.deadline_margin - self.clock.monotonic()

    # -- the model call, with the budget in front of it ---------------------------------

    def _call_model(self, run: _Run) -> ModelResponse:
        state = run.state
        budget = self.agent.budget
        check = budget.check(self._prompt_tokens(run))
        run.emit(check)
        nudge = check.nudge if check.action == "nudge" else None
        if check.action == "over_hard_limit":
            self._compact(run, target=int(budget.tokens * budget.nudge_at))
        rejected: PromptTooLong | None = None
        try:
            response: ModelResponse | None = self.model(self._request(run, nudge))
        except PromptTooLong as too_long:
            response, rejected = None, too_long
        # A rejected prompt and a reply cut short by a full context window (the provider's
        # context-window stop) have one remedy: one retry with half the prompt. A second
        # one is the caller's error.
        if response is None or response.stop == "context_window_exceeded":
            current = estimate_tokens(self._system(state), self._window(run))
            if not self._compact(run, target=max(1, current // 2)):
                # Nothing could go: the same request again is a billed call that fails the
                # same way. The turn fails now, with the provider's own rejection.
                raise rejected or PromptTooLong(
                    "the context window is full and nothing more can be compacted",
                    provider="engine",
                )
            response = self.model(self._request(run, nudge))
            if response.stop == "context_window_exceeded":
                raise PromptTooLong(
                    "the context window is still full after compaction",
                    provider="engine",
                )
        if response.usage is not None:
            # The answer is appended next; the provider's count already covers it.
            state.prompt_tokens = response.usage.total
            state.prompt_tokens_at = len(run.history) + 1
        return response

    def _prompt_tokens(self, run: _Run) -> int:
        """The prompt's size: the last known count plus an estimate of what came since.

        Counting only the new messages keeps a step's cost flat however long the
        session is.
        """
        state = run.state
        if state.prompt_tokens is None:
            used = estimate_tokens(self._system(state), self._window(run))
        else:
            used = state.prompt_tokens + estimate_tokens("", run.history[state.prompt_tokens_at :])
        state.prompt_tokens, state.prompt_tokens_at = used, len(run.history)
        return used

    def _system(self, state: TurnState, nudge: str | None = None) -> str:
        parts = [self.agent.system_prompt]
        if nudge:
            parts.append(nudge)
        return "\n\n".join(parts)

    def _request(self, run: _Run, nudge: str | None) -> ModelRequest:
        # The messages are validated models already; construct without re-validating them.
        return ModelRequest.model_construct(
            system=self._system(run.state, nudge),
            messages=tuple(self._window(run)),
            tools=self._specs,
            max_tokens=self.max_tokens,
            # min(the provider's timeout, the time left): the adapter applies the lower.
            # An endless deadline (no Lambda context) leaves the provider's alone.
            timeout=max(left, 0.0) if math.isfinite(left := self._left(run)) else None,
        )

    def _window(self, run: _Run) -> list[Message]:
        """The prompt's messages: the task and notes for what compaction dropped, then the tail."""
        return window(run.history, run.state.window_start, task=run.state.task_at)

    def _compact(self, run: _Run, *, target: int) -> bool:
        """Drop the oldest messages the prompt can lose to fit ``target``; whether any went."""
        state = run.state
        before = len(self._window(run))
        start = compact_start(
            run.history,
            system=self._system(state),
            target_tokens=target,
            start=state.window_start,
            task=state.task_at,
        )
        if start == state.window_start:
            return False  # nothing can go without splitting a tool call from its results
        state.window_start = start
        state.prompt_tokens = None
        run.emit(PromptCompaction(from_=before, to=len(self._window(run))))
        return True

    # -- one batch of tool calls --------------------------------------------------------

    def _advance_batch(self, run: _Run) -> Outcome | None:
        state = run.state
        pause = self._gating.gate(state, run.emit)
        if pause is not None:
            return Paused(
                state=state, pending=pause.pending, policy=pause.policy, events=run.events
            )
        runs: list[ToolRun] = []
        committed = False
        if not self._gating.skip_if_denied(state, run.emit):
            runs = [
                self._tool_run(run, cs) for cs in state.batch if cs.status in ("allowed", "started")
            ]
            committed = bool(runs) and runs[0].safe
            if committed:
                # The step's one write: the model's reply, the gate's decisions and
                # the last batch's results, before the safe calls run (a call that is
                # not safe has its own checkpoint just before it runs).
                self._save(run)
            finished = run_lane(
                runs,
                pool=self._pool,
                emit=run.emit,
                before_solo=lambda _cs: self._save(run),
                out_of_time=lambda: self._out_of_time(run),
            )
            if not finished:
                return Continue(state=state, events=run.events)
        for cs in state.batch:
            run.history.append(
                ToolResultMessage(
                    call_id=cs.call.id,
                    name=cs.call.name,
                    content=cs.content or "",
                    is_error=cs.is_error,
                )
            )
        human_denied = [cs.call.name for cs in state.batch if cs.human_denied]
        state.batch = []
        if committed and all(item.safe for item in runs):
            run.unsaved = True
        else:
            self._save(run)
        if human_denied:
            run.emit(LoopDenied(denied_tools=human_denied))
            text = f"Not done: {', '.join(human_denied)} was denied."
            return Finished(state=state, text=text, stop_reason="denied", events=run.events)
        return None

    # -- running one call ---------------------------------------------------------------

    def _tool_run(self, run: _Run, cs: CallState) -> ToolRun:
        state = run.state
        call = cs.call
        if call.name == system_tools.SKILL:
            return ToolRun(state=cs, safe=True, run=lambda: self._load_skill(call.args))
        tool = self.agent.tools[call.name]
        if cs.status == "started" and not (tool.safe or tool.idempotent):
            # A crash left this call's outcome unknown: never run a side effect twice.
            message = "interrupted — outcome unknown; the call may or may not have taken effect"
            return ToolRun(state=cs, safe=True, run=lambda: (message, True, []))
        context = ToolContext(
            agent=state.agent,
            tenant=state.tenant,
            environment=state.environment,
            session_id=state.session_id,
            run_id=state.run_id,
            call_id=call.id,
        )

        def execute() -> tuple[str, bool, list[LoopEvent]]:
            return encode_result(tool.call(tool.validate(call.args), context)), False, []

        return ToolRun(state=cs, safe=tool.safe, run=execute)

    def _load_skill(self, args: dict[str, Any]) -> tuple[str, bool, list[LoopEvent]]:
        name = str(args.get("name", ""))
        skill = self.agent.skills.get(name)
        if skill is None:
            known = ", ".join(sorted(self.agent.skills))
            return f"unknown skill {name!r}; skills: {known}", True, []
        return skill.body, False, [SkillLoaded(skill=name)]

    def _save(self, run: _Run) -> None:
        run.unsaved = False
        if run.checkpoint is not None:
            run.checkpoint(run.state, run.history)
