"""OpenAI-compatible chat completions: OpenAI, DeepSeek, Ollama, vLLM."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from signoff.messages import (
    RAW_ARGUMENTS,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from signoff.models._http import build_client, key_header, post_json
from signoff.models._limits import openai_too_long
from signoff.models._wire import read_reply

if TYPE_CHECKING:
    from pathlib import Path

    import httpx

    from signoff.messages import Message, ModelRequest, Stop, ToolSpec
    from signoff.models.settings import MaxTokensField, ModelSettings, ReasoningEffort

__all__ = ["OpenAIChat", "max_tokens_field_for"]

_PROVIDER = "openai"
_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Reasoning models (o1, o3, o4-mini, gpt-5…) refuse "max_tokens" and want
# "max_completion_tokens"; a router may prefix the vendor ("openai/o4-mini").
_REASONING_MODEL = re.compile(r"(?:^|/)(?:o\d|gpt-5)")


def max_tokens_field_for(model: str) -> MaxTokensField:
    """The output-limit field ``model`` takes when the settings do not name one."""
    return "max_completion_tokens" if _REASONING_MODEL.search(model) else "max_tokens"


class OpenAIChat:
    """A ``ModelCall`` over ``POST {base_url}/chat/completions``."""

    def __init__(
        self,
        *,
        model: str,
        client: httpx.Client,
        max_tokens_field: MaxTokensField | None = None,
        reasoning_effort: ReasoningEffort | None = None,
    ) -> None:
        self.model = model
        self.client = client
        self.max_tokens_field: MaxTokensField = max_tokens_field or max_tokens_field_for(model)
        self.reasoning_effort = reasoning_effort

    @classmethod
    def from_config(
        cls, settings: ModelSettings, agent_dir: Path, *, api_key: str | None = None
    ) -> OpenAIChat:
        """The adapter an agent's ``model`` settings describe; the key is ``api_key`` (its
        ``apiKey`` secret's value), else the variable ``apiKeyEnv`` names (``OPENAI_API_KEY``)."""
        return cls.from_settings(
            model=settings.model,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env or "OPENAI_API_KEY",
            api_key=api_key,
            max_tokens_field=settings.max_tokens_field,
            reasoning_effort=settings.reasoning_effort,
        )

    @classmethod
    def from_settings(
        cls,
        *,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        api_key: str | None = None,
        timeout: float = 60.0,
        max_tokens_field: MaxTokensField | None = None,
        reasoning_effort: ReasoningEffort | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> OpenAIChat:
        """Builds the adapter and its client; without a key (Ollama) no Authorization is sent."""
        headers = {
            "content-type": "application/json",
            **key_header(api_key_env, "authorization", scheme="Bearer ", api_key=api_key),
        }
        client = build_client(
            base_url=base_url or _DEFAULT_BASE_URL,
            headers=headers,
            timeout=timeout,
            transport=transport,
        )
        return cls(
            model=model,
            client=client,
            max_tokens_field=max_tokens_field,
            reasoning_effort=reasoning_effort,
        )

    def __call__(self, request: ModelRequest) -> ModelResponse:
        """Sends one chat completion request.

        Raises:
            ModelUnavailable: rate limit, server error, timeout or connection failure.
            PromptTooLong: the prompt exceeds the model's context length.
            ModelRejected: any other refusal, or a reply of an unexpected shape.
        """
        body = self.request_body(request)
        reply = post_json(
            self.client,
            "/chat/completions",
            body,
            provider=_PROVIDER,
            too_long=openai_too_long,
            timeout=request.timeout,
        )
        return read_reply(reply, _response, provider=_PROVIDER)

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for ``request``."""
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend(_message(message) for message in request.messages)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            self.max_tokens_field: request.max_tokens,
        }
        if self.reasoning_effort is not None:
            body["reasoning_effort"] = self.reasoning_effort
        if request.tools:
            body["tools"] = [_tool(tool) for tool in request.tools]
        return body


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, ToolResultMessage):
        return {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
    wire: dict[str, Any] = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": json.dumps(call.args, ensure_ascii=False),
                },
            }
            for call in message.tool_calls
        ]
    return wire


def _tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _response(reply: dict[str, Any]) -> ModelResponse:
    choice = reply["choices"][0]
    message = choice["message"]
    calls = tuple(
        ToolCall(
            id=call["id"],
            name=call["function"]["name"],
            args=_arguments(call["function"].get("arguments")),
        )
        for call in message.get("tool_calls") or ()
    )
    usage = reply.get("usage")
    # A refusal comes as `content: null` beside the model's explanation.
    refusal = message.get("refusal")
    return ModelResponse(
        text=message.get("content") or refusal or "",
        tool_calls=calls,
        usage=(
            Usage(input_tokens=usage["prompt_tokens"], output_tokens=usage["completion_tokens"])
            if usage
            else None
        ),
        stop="refusal" if refusal else _stop(choice.get("finish_reason"), calls),
    )


def _arguments(raw: object) -> dict[str, Any]:
    """Decodes a tool call's arguments; anything but a JSON object is kept raw.

    The raw text goes back to the model with the error (``_stop``), so it sees
    what it wrote.
    """
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    text = str(raw)
    try:
        decoded = json.loads(text)
    except ValueError:
        return {RAW_ARGUMENTS: text}
    return decoded if isinstance(decoded, dict) else {RAW_ARGUMENTS: text}


def _stop(reason: object, calls: tuple[ToolCall, ...]) -> Stop:
    if reason == "length":
        return "max_tokens"  # calls cut off with the text are not run (engine)
    if reason == "content_filter":
        return "content_filtered"
    if any(RAW_ARGUMENTS in call.args for call in calls):
        return "malformed_tool_use"
    # Some compatible servers (older Ollama) report "stop" even when they made tool calls.
    return "tool_use" if calls else "end"
