"""Anthropic's Messages API over httpx."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.messages import ModelResponse, ToolCall, ToolResultMessage, Usage, UserMessage
from signoff.models._http import build_client, key_header, post_json
from signoff.models._limits import anthropic_too_long
from signoff.models._wire import block_stop, gather_blocks, merge_roles, read_reply

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

    import httpx

    from signoff.messages import Message, ModelRequest
    from signoff.models.settings import ModelSettings

__all__ = ["ANTHROPIC_VERSION", "AnthropicMessages"]

ANTHROPIC_VERSION = "2023-06-01"

_PROVIDER = "anthropic"
_DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicMessages:
    """A ``ModelCall`` over ``POST {base_url}/v1/messages``."""

    def __init__(self, *, model: str, client: httpx.Client) -> None:
        self.model = model
        self.client = client

    @classmethod
    def from_config(
        cls, settings: ModelSettings, agent_dir: Path, *, api_key: str | None = None
    ) -> AnthropicMessages:
        """The adapter an agent's ``model`` settings describe; the key is ``api_key`` (its
        ``apiKey`` secret's value), else in the variable ``apiKeyEnv`` names
        (``ANTHROPIC_API_KEY``)."""
        return cls.from_settings(
            model=settings.model,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env or "ANTHROPIC_API_KEY",
            api_key=api_key,
        )

    @classmethod
    def from_settings(
        cls,
        *,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        api_key: str | None = None,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> AnthropicMessages:
        """Builds the adapter and its client from the key in ``api_key_env``."""
        headers = {
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            **key_header(api_key_env, "x-api-key", api_key=api_key),
        }
        client = build_client(
            base_url=base_url or _DEFAULT_BASE_URL,
            headers=headers,
            timeout=timeout,
            transport=transport,
        )
        return cls(model=model, client=client)

    def __call__(self, request: ModelRequest) -> ModelResponse:
        """Sends one Messages API request.

        Raises:
            ModelUnavailable: rate limit, overload, server error, timeout or connection failure.
            PromptTooLong: the prompt exceeds the model's context window.
            ModelRejected: any other refusal, or a reply of an unexpected shape.
        """
        body = self.request_body(request)
        reply = post_json(
            self.client,
            "/v1/messages",
            body,
            provider=_PROVIDER,
            too_long=anthropic_too_long,
            timeout=request.timeout,
        )
        return read_reply(reply, _response, provider=_PROVIDER)

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for ``request``."""
        body: dict[str, Any] = {"model": self.model, "max_tokens": request.max_tokens}
        if request.system:
            body["system"] = request.system
        body["messages"] = _messages(request.messages)
        if request.tools:
            body["tools"] = [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                }
                for tool in request.tools
            ]
        return body


def _messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Content-block messages; adjacent same-role messages merge, as the API requires."""
    wire = merge_roles(messages, _blocks)
    for entry in wire:
        if entry["role"] == "user":
            # The API wants tool_result blocks before any text in the same user message.
            entry["content"].sort(key=lambda block: block["type"] != "tool_result")
    return wire


def _blocks(message: Message) -> list[dict[str, Any]]:
    if isinstance(message, UserMessage):
        return [{"type": "text", "text": message.content}]
    if isinstance(message, ToolResultMessage):
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.call_id,
            "content": message.content,
        }
        if message.is_error:
            block["is_error"] = True
        return [block]
    # The API rejects empty text blocks, so a bare tool call carries none.
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": message.content}] if message.content else []
    )
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.args}
        for call in message.tool_calls
    )
    return blocks


def _response(reply: dict[str, Any]) -> ModelResponse:
    text, calls = gather_blocks(_parts(reply["content"]))
    return ModelResponse(
        text=text,
        tool_calls=calls,
        stop=block_stop(reply.get("stop_reason"), has_calls=bool(calls)),
        usage=_usage(reply.get("usage")),
    )


def _parts(blocks: Iterable[dict[str, Any]]) -> Iterator[str | ToolCall]:
    """The text and tool-use blocks of a reply; thinking and other blocks are skipped."""
    for block in blocks:
        if block["type"] == "text":
            yield block["text"]
        elif block["type"] == "tool_use":
            yield ToolCall(id=block["id"], name=block["name"], args=block["input"])


def _usage(usage: dict[str, Any] | None) -> Usage | None:
    if not usage:
        return None
    # Cached prompt tokens are reported apart but still fill the context window.
    prompt = (
        usage["input_tokens"]
        + (usage.get("cache_creation_input_tokens") or 0)
        + (usage.get("cache_read_input_tokens") or 0)
    )
    return Usage(input_tokens=prompt, output_tokens=usage["output_tokens"])
