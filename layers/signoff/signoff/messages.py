"""The conversation as the engine and every model adapter see it.

Provider adapters translate these to and from their own wire formats; nothing
else in signoff knows a provider's message shape.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AssistantMessage",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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


class ModelResponse(_Frozen):
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    # "max_tokens" means the text was cut off and the model should continue.
    stop: Literal["end", "tool_use", "max_tokens"] = "end"
