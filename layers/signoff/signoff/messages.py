"""The conversation as the engine and every model adapter see it.

Provider adapters translate these to and from their own wire formats; nothing
else in signoff knows a provider's message shape.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "RAW_ARGUMENTS",
    "AssistantMessage",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "Refusal",
    "Stop",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
]


# The key under which an adapter keeps tool-call arguments that were not a JSON object,
# so the model is shown what it wrote when it is asked to correct it.
RAW_ARGUMENTS = "_raw"

# Why a reply ended, the same words for every provider (docs/models.md has the table):
# end / tool_use / max_tokens — the answer, its tool calls, or text cut at maxTokens;
# refusal / content_filtered / guardrail_intervened — the model or the provider's filter
# declined, and what it said is the turn's answer; context_window_exceeded — the prompt
# left no room to answer (the engine compacts); malformed_tool_use — the calls could not
# be read (the engine tells the model so).
Refusal = Literal["refusal", "content_filtered", "guardrail_intervened"]
Stop = Literal[
    "end",
    "tool_use",
    "max_tokens",
    "refusal",
    "content_filtered",
    "guardrail_intervened",
    "context_window_exceeded",
    "malformed_tool_use",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """One tool call the model asked for."""

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class UserMessage(_Frozen):
    role: Literal["user"] = "user"
    content: str


class AssistantMessage(_Frozen):
    role: Literal["assistant"] = "assistant"
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class ToolResultMessage(_Frozen):
    """The outcome of one tool call, sent back to the model."""

    role: Literal["tool"] = "tool"
    call_id: str
    name: str
    content: str
    is_error: bool = False


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]


class ToolSpec(_Frozen):
    """What a model is told about a tool: its name, purpose and argument schema."""

    name: str
    description: str
    parameters: dict[str, Any]


class Usage(_Frozen):
    input_tokens: int
    output_tokens: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


class ModelRequest(_Frozen):
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 4096
    # Seconds the call may take in all, retries included: what is left of the
    # invocation before its deadline. None: only the provider's own timeout bounds it.
    timeout: float | None = None


class ModelResponse(_Frozen):
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    # "max_tokens" means the text was cut off and the model should continue.
    stop: Stop = "end"
