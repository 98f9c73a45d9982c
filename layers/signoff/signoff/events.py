"""Every ``LoopEvent`` of protocol v1, as pydantic models.

The wire names are camelCase (``usedTokens``); Python uses snake_case. ``dump``
gives the wire form with absent optional fields left out, and
``loop_event_schema`` the JSON Schema checked in at
``protocol/loop-event.schema.json``.
"""

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

from signoff.messages import Refusal
from signoff.scopes import PendingScope  # re-exported: events stays its public home

if TYPE_CHECKING:
    from signoff.messages import ToolCall

__all__ = [
    "ENGINE_EVENT_TYPES",
    "ActauthDecision",
    "ApprovalPending",
    "AssistantText",
    "BudgetCheck",
    "Done",
    "ErrorEvent",
    "LoopDenied",
    "LoopDone",
    "LoopEvent",
    "LoopMaxTurns",
    "LoopSkipped",
    "PendingScope",
    "PromptCompaction",
    "QuestionPending",
    "SessionEvent",
    "SkillLoaded",
    "ToolResult",
    "ToolStarted",
    "ToollaneResult",
    "dump",
    "loop_event_schema",
    "parse",
    "tool_result",
]

DateTime = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
Decision = Literal["allow", "ask", "deny"]


class _Event(BaseModel):
    model_config = ConfigDict(
        defer_build=True,
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
    )


class BudgetCheck(_Event):
    type: Literal["budget:check"] = "budget:check"
    action: Literal["ok", "nudge", "over_hard_limit"]
    used_tokens: int
    budget_tokens: int
    ratio: float
    nudge: str | None = None


class PromptCompaction(_Event):
    type: Literal["prompt:compaction"] = "prompt:compaction"
    from_: int = Field(alias="from")
    to: int


class AssistantText(_Event):
    type: Literal["assistant:text"] = "assistant:text"
    text: str


class ActauthDecision(_Event):
    type: Literal["actauth:decision"] = "actauth:decision"
    tool: str
    decision: Decision
    reason: str


class ToolStarted(_Event):
    type: Literal["tool:started"] = "tool:started"
    id: str
    tool: str
    args: dict[str, Any]
    detail_text: str
    # Present when an approver changed the arguments: what the model asked for
    # (``args`` is what runs). Additive to protocol v1.
    original_args: dict[str, Any] | None = None


class ToolResult(_Event):
    type: Literal["tool:result"] = "tool:result"
    id: str
    tool: str
    args: dict[str, Any] | None = None
    detail_text: str | None = None
    status_text: str


class ToollaneResult(_Event):
    type: Literal["toollane:result"] = "toollane:result"
    name: str
    summary: str


class SkillLoaded(_Event):
    type: Literal["skill:loaded"] = "skill:loaded"
    skill: str


class LoopSkipped(_Event):
    type: Literal["loop:skipped"] = "loop:skipped"
    name: str
    denied_tools: list[str]


class LoopMaxTurns(_Event):
    type: Literal["loop:max_turns"] = "loop:max_turns"
    max_turns: int


class LoopDenied(_Event):
    type: Literal["loop:denied"] = "loop:denied"
    denied_tools: list[str]


class LoopDone(_Event):
    type: Literal["loop:done"] = "loop:done"
    text: str
    # Additive to v1: present when the answer is a refusal (the model's, a content
    # filter's, a guardrail's) rather than a finished task; see docs/models.md.
    refused: Refusal | None = None


class SessionEvent(_Event):
    type: Literal["session"] = "session"
    session_id: str


class ApprovalPending(_Event):
    type: Literal["approval:pending"] = "approval:pending"
    id: str
    tool: str
    args: dict[str, Any]
    scope: PendingScope
    reason: str
    requested_at: DateTime


class QuestionPending(_Event):
    type: Literal["question:pending"] = "question:pending"
    id: str
    question: str
    options: list[str] | None = None
    agent: str
    session_id: str | None = None
    requested_at: DateTime


class Done(_Event):
    type: Literal["done"] = "done"
    text: str
    stop_reason: Literal["max_turns", "denied"] | None = None


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    error: str


LoopEvent = Annotated[
    BudgetCheck
    | PromptCompaction
    | AssistantText
    | ActauthDecision
    | ToolStarted
    | ToolResult
    | ToollaneResult
    | SkillLoaded
    | LoopSkipped
    | LoopMaxTurns
    | LoopDenied
    | LoopDone
    | SessionEvent
    | ApprovalPending
    | QuestionPending
    | Done
    | ErrorEvent,
    Field(discriminator="type"),
]

ENGINE_EVENT_TYPES = frozenset(
    {
        "budget:check",
        "prompt:compaction",
        "assistant:text",
        "actauth:decision",
        "tool:started",
        "tool:result",
        "toollane:result",
        "skill:loaded",
        "loop:skipped",
        "loop:max_turns",
        "loop:denied",
        "loop:done",
    }
)

_ADAPTER: TypeAdapter[LoopEvent] = TypeAdapter(LoopEvent, config=ConfigDict(defer_build=True))
SCHEMA_ID = "https://signoff.dev/protocol/v1/loop-event.schema.json"


def tool_result(call: "ToolCall", status_text: str, detail_text: str | None = None) -> ToolResult:
    """The ``tool:result`` that ends ``call``, however it ended (ran, denied, answered,
    skipped, refused as invalid): the call's id, tool and arguments, and how it ended."""
    return ToolResult(
        id=call.id, tool=call.name, args=call.args, detail_text=detail_text, status_text=status_text
    )


def dump(event: LoopEvent) -> dict[str, Any]:
    """The wire form of an event: camelCase keys, absent optionals left out."""
    return event.model_dump(mode="json", by_alias=True, exclude_none=True)


def parse(data: dict[str, Any]) -> LoopEvent:
    """An event from its wire form."""
    return _ADAPTER.validate_python(data)


def loop_event_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of every LoopEvent, as generated from the models."""
    raw = _ADAPTER.json_schema(by_alias=True, mode="serialization")
    defs: dict[str, Any] = raw.pop("$defs")
    for definition in defs.values():
        _tighten(definition)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "LoopEvent",
        "description": "One event of a signoff turn (protocol v1).",
        "oneOf": raw["oneOf"],
        "$defs": dict(sorted(defs.items())),
    }


def _tighten(definition: dict[str, Any]) -> None:
    """Optional fields are absent rather than null, and ``type`` is always required."""
    properties: dict[str, Any] = definition.get("properties", {})
    for name, prop in properties.items():
        variants = prop.get("anyOf")
        if prop.get("default", ...) is None and variants:
            kept = [v for v in variants if v != {"type": "null"}]
            prop.pop("anyOf")
            prop.pop("default")
            if len(kept) == 1:
                prop.update(kept[0])
            else:
                prop["anyOf"] = kept
        if name == "type":
            prop.pop("default", None)
    if "type" in properties:
        required = definition.setdefault("required", [])
        if "type" not in required:
            required.insert(0, "type")
