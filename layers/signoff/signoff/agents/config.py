"""``agent.yaml``: the validated shape of an agent's configuration."""

from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from signoff.channels.http_notifier import HttpNotifierConfig
from signoff.gate.decision import TENANT
from signoff.gate.policy import Duration, EscalationStep, check_ladder, seconds
from signoff.gate.rules import Decision
from signoff.models.settings import ModelSettings

__all__ = [
    "NOTIFY_EVENTS",
    "PYTHON_HOMES",
    "AgentConfig",
    "BudgetSettings",
    "ScheduleSettings",
    "notify_shorthand",
    "seconds",
]


class _Config(BaseModel):
    model_config = ConfigDict(
        defer_build=True,
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
    )


class BudgetSettings(_Config):
    tokens: int = Field(default=8000, gt=0)
    nudge_at: float = Field(default=0.8, gt=0, le=1)


class ScheduleSettings(_Config):
    """An EventBridge schedule that sends the agent a message.

    The one place a schedule is written: ``signoff template sync`` generates the
    template's schedule event from it, and ``signoff check`` fails when they differ.
    """

    expression: str = Field(pattern=r"^(cron|rate)\(.+\)$")
    message: str
    # the first segment of the rules' scope: no "/" (signoff.gate.decision.TENANT)
    tenant: str = Field(default="default", pattern=TENANT.pattern)
    # The template Condition that switches the schedule on when deployed (one a
    # parameter sets, like SampleSchedulesEnabled); absent: always on.
    condition: str | None = Field(default=None, pattern=r"^[A-Za-z0-9]+$")


class ApprovalCardSettings(_Config):
    """``approvalCard``: what an approver's card shows beyond the call (``signoff.approver.card``).

    ``conversation: false`` leaves out the request that started the turn and the
    agent's words before the call, for an agent whose conversations an approver
    must not read.
    """

    conversation: bool = True


NotifyEvent = Literal["approval", "question", "run_start", "run_finish", "stuck"]
NOTIFY_EVENTS: tuple[NotifyEvent, ...] = get_args(NotifyEvent)


def notify_shorthand(value: Any) -> Any:
    """``notify: console`` or ``notify: [a, b]`` → every event to each named channel.

    The mapping form (``{name: [events]}``) picks the kinds, and is needed for an
    approval-only channel (redis, database), which refuses the other events.
    """
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(name, str) for name in value):
        return {name: list(NOTIFY_EVENTS) for name in value}
    return value


# loopengine's AgentConfig keys whose values are TypeScript code, and where the same
# thing lives in a signoff agent folder (hooks.py: signoff.agents.hooks).
PYTHON_HOMES: Final[dict[str, str]] = {
    "onRunStart": "define on_run_start(ctx) in hooks.py in the agent's folder",
    "onRunFinish": "define on_run_finish(ctx) in hooks.py in the agent's folder",
    "tenantFor": "define tenant_for(headers) in hooks.py in the agent's folder "
    "(from verified headers only)",
    "sessionIdFor": "define session_id_for(body) in hooks.py in the agent's folder",
    "tools": "tools are Python functions decorated with @tool in tools.py in the agent's folder",
    "isSafeTool": "mark a tool @tool(safe=True) in tools.py in the agent's folder",
    "approver": "an ask goes to the channels of notify or httpNotifier "
    "(signoff run asks on the terminal)",
    "createModelCall": "set model: {provider, model} (signoff.models registers more providers)",
}


class AgentConfig(_Config):
    """The contents of ``agents/<name>/agent.yaml``.

    loopengine's ``AgentConfig`` keys are accepted as they are spelled there:
    ``systemPrompt`` (for ``system``), ``maxTurns``, the inline ``rules`` with
    ``defaultDecision`` (instead of ``actauth.yml``), ``httpNotifier``
    (``signoff.channels.http_notifier``) and ``name`` (the folder's). Its
    TypeScript-only keys (functions) are refused naming their Python home
    (``PYTHON_HOMES``).
    """

    name: str | None = None
    description: str = ""
    system: str
    model: ModelSettings = ModelSettings()
    max_turns: int = Field(default=10, gt=0, le=1000)
    budget: BudgetSettings = BudgetSettings()
    approval_timeout: Duration = 86400.0
    remind_after: Duration | None = None
    # The ladder every ask and question of the agent climbs while it waits
    # (signoff.gate.policy); a rule's own ``escalate`` replaces it for its calls.
    escalate: tuple[EscalationStep, ...] = ()
    session_key: str | None = None
    approval_card: ApprovalCardSettings = ApprovalCardSettings()
    # ``{name: [events]}``; ``name`` or ``[names]`` is every event (``notify_shorthand``).
    notify: Annotated[dict[str, list[NotifyEvent]], BeforeValidator(notify_shorthand)] = Field(
        default_factory=dict
    )
    schedule: ScheduleSettings | None = None
    # loopengine's inline rule form; validated and bound to the agent by the loader
    # (signoff.gate.rules_from), so errors name the rule as in actauth.yml.
    rules: list[Any] | None = None
    default_decision: Decision | None = None
    http_notifier: HttpNotifierConfig | None = None

    @field_validator("escalate")
    @classmethod
    def _agent_ladder(cls, steps: tuple[EscalationStep, ...]) -> tuple[EscalationStep, ...]:
        check_ladder(steps, may_approve=False)
        return steps

    @model_validator(mode="before")
    @classmethod
    def _loopengine_keys(cls, data: Any) -> Any:
        """``systemPrompt`` read as ``system``; a TypeScript-only key refused with its
        Python home. ``ctx.field`` names the key (the error has no location of its own)."""
        if not isinstance(data, dict):
            return data
        for key, home in PYTHON_HOMES.items():
            if key in data:
                raise PydanticCustomError(
                    "typescript_only",
                    "{key} takes TypeScript code in loopengine; in signoff, {home}",
                    {"field": key, "key": key, "home": home},
                )
        model = data.get("model")
        if isinstance(model, dict) and isinstance(model.get("apiKey"), str | int | float):
            # AgentModelConfig.apiKey holds the key itself; a YAML file in the agents
            # layer is no place for one (invariant 6: no secret in config). The
            # reference form, {secret: NAME}, is ModelSettings' to read.
            raise PydanticCustomError(
                "inline_secret",
                "a key is never written in agent.yaml: write apiKey: {secret: <name>} "
                "(a Secrets Manager secret) or apiKeyEnv: <the variable that holds it>",
                {"field": "model.apiKey"},
            )
        if "systemPrompt" in data:
            if "system" in data:
                raise PydanticCustomError(
                    "duplicate_alias",
                    "system and systemPrompt (loopengine's name) are one setting: write one",
                    {"field": "systemPrompt"},
                )
            data = {**data, "system": data["systemPrompt"]}
            del data["systemPrompt"]
        return data
