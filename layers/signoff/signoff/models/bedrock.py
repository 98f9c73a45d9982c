"""Amazon Bedrock's Converse API over a boto3 ``bedrock-runtime`` client.

botocore is imported only inside functions: loading it costs a Lambda cold start
time that agents on other providers should not pay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.errors import ModelRejected, ModelUnavailable, PromptTooLong
from signoff.http_errors import RETRYABLE, retry_after
from signoff.messages import ModelResponse, ToolCall, ToolResultMessage, Usage, UserMessage
from signoff.models._limits import bedrock_too_long
from signoff.models._wire import block_stop, gather_blocks, merge_roles, read_reply

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient
    from mypy_boto3_bedrock_runtime.type_defs import (
        ContentBlockOutputTypeDef,
        ConverseResponseTypeDef,
        TokenUsageTypeDef,
    )

    from signoff.messages import Message, ModelRequest
    from signoff.models.settings import ModelSettings

__all__ = ["READ_TIMEOUTS", "BedrockConverse"]

_PROVIDER = "bedrock"
_UNAVAILABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "ModelNotReadyException",
        "InternalServerException",
        "ModelTimeoutException",
    }
)


# botocore fixes a client's read timeout when it is built: a call with less time left
# than the client's timeout goes through a client with the next shorter one of these
# (rounded down, so a call ends before its deadline), built once each.
READ_TIMEOUTS = (1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 89.0, 144.0, 233.0)


class BedrockConverse:
    """A ``ModelCall`` over ``bedrock-runtime`` ``Converse``.

    ``client_for`` builds a client with a given read timeout; with it, a request
    whose ``timeout`` is shorter than ``timeout`` (the client's) is sent through a
    client that gives up in time.
    """

    def __init__(
        self,
        model: str,
        client: BedrockRuntimeClient,
        *,
        timeout: float = 60.0,
        client_for: Callable[[float], BedrockRuntimeClient] | None = None,
    ) -> None:
        self.model = model
        self.client = client
        self.timeout = timeout
        self._client_for = client_for
        self._shorter: dict[float, BedrockRuntimeClient] = {}

    @classmethod
    def from_config(cls, settings: ModelSettings, agent_dir: Path) -> BedrockConverse:
        """The adapter an agent's ``model`` settings describe (``region`` or the default)."""
        return cls.from_settings(model=settings.model, region=settings.region)

    @classmethod
    def from_settings(
        cls, *, model: str, region: str | None = None, timeout: float = 60.0
    ) -> BedrockConverse:
        """Builds the adapter with its own client; retries are left to ``Recovering``."""
        import boto3
        from botocore.config import Config

        def client_for(read_timeout: float) -> BedrockRuntimeClient:
            config = Config(
                read_timeout=read_timeout,
                connect_timeout=min(read_timeout, 10.0),
                retries={"total_max_attempts": 1},
            )
            return boto3.client("bedrock-runtime", region_name=region, config=config)

        return cls(model, client_for(timeout), timeout=timeout, client_for=client_for)

    def __call__(self, request: ModelRequest) -> ModelResponse:
        """Sends one Converse request.

        Raises:
            ModelUnavailable: throttling, an unready or failing service, timeout or connection
                failure.
            PromptTooLong: the prompt exceeds the model's context window.
            ModelRejected: any other refusal, or a reply of an unexpected shape.
        """
        from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError
        from botocore.exceptions import ConnectionError as BotoConnectionError

        params = self.request_params(request)
        try:
            reply = self.client_within(request.timeout).converse(**params)
        except ClientError as exc:
            raise _translate(exc.response) from exc
        except (BotoConnectionError, HTTPClientError) as exc:
            raise ModelUnavailable(
                f"{_PROVIDER}: connection failed or timed out ({type(exc).__name__})",
                provider=_PROVIDER,
            ) from exc
        except BotoCoreError as exc:
            raise ModelRejected(
                f"{_PROVIDER}: request could not be sent ({type(exc).__name__})",
                provider=_PROVIDER,
            ) from exc
        return read_reply(reply, _response, provider=_PROVIDER)

    def client_within(self, limit: float | None) -> BedrockRuntimeClient:
        """The client whose read timeout ends a call within ``limit`` seconds, if it can."""
        if limit is None or limit >= self.timeout or self._client_for is None:
            return self.client
        fitting = [step for step in READ_TIMEOUTS if step <= limit]
        step = fitting[-1] if fitting else READ_TIMEOUTS[0]
        if step not in self._shorter:
            self._shorter[step] = self._client_for(step)
        return self._shorter[step]

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``client.converse`` for ``request``."""
        params: dict[str, Any] = {"modelId": self.model}
        if request.system:
            params["system"] = [{"text": request.system}]
        params["messages"] = _messages(request.messages)
        params["inferenceConfig"] = {"maxTokens": request.max_tokens}
        if request.tools:
            params["toolConfig"] = {
                "tools": [
                    {
                        "toolSpec": {
                            "name": tool.name,
                            "description": tool.description,
                            "inputSchema": {"json": tool.parameters},
                        }
                    }
                    for tool in request.tools
                ]
            }
        return params


def _messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Converse messages; adjacent same-role messages merge, as roles must alternate."""
    return merge_roles(messages, _blocks)


def _blocks(message: Message) -> list[dict[str, Any]]:
    if isinstance(message, UserMessage):
        return [{"text": message.content}]
    if isinstance(message, ToolResultMessage):
        return [
            {
                "toolResult": {
                    "toolUseId": message.call_id,
                    "content": [{"text": message.content}],
                    "status": "error" if message.is_error else "success",
                }
            }
        ]
    # Converse rejects blank text blocks, so a bare tool call carries none.
    blocks: list[dict[str, Any]] = [{"text": message.content}] if message.content else []
    blocks.extend(
        {"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.args}}
        for call in message.tool_calls
    )
    return blocks


def _response(reply: ConverseResponseTypeDef) -> ModelResponse:
    text, calls = gather_blocks(_parts(reply["output"]["message"]["content"]))
    usage = reply.get("usage")
    return ModelResponse(
        text=text,
        tool_calls=calls,
        stop=block_stop(reply["stopReason"], has_calls=bool(calls)),
        usage=_usage(usage) if usage else None,
    )


def _parts(blocks: Iterable[ContentBlockOutputTypeDef]) -> Iterator[str | ToolCall]:
    """The text and tool-use blocks of a reply; reasoning and other blocks are skipped."""
    for block in blocks:
        if "text" in block:
            yield block["text"]
        elif "toolUse" in block:
            use = block["toolUse"]
            yield ToolCall(id=use["toolUseId"], name=use["name"], args=use["input"])


def _usage(usage: TokenUsageTypeDef) -> Usage:
    # Cached prompt tokens are reported apart but still fill the context window.
    prompt = (
        usage["inputTokens"]
        + usage.get("cacheReadInputTokens", 0)
        + usage.get("cacheWriteInputTokens", 0)
    )
    return Usage(input_tokens=prompt, output_tokens=usage["outputTokens"])


def _translate(response: Any) -> ModelUnavailable | PromptTooLong | ModelRejected:
    """Maps a botocore ``ClientError`` response to our error tree."""
    error = response.get("Error", {})
    meta = response.get("ResponseMetadata", {})
    code = str(error.get("Code", ""))
    text = str(error.get("Message", ""))
    status = meta.get("HTTPStatusCode")
    message = f"{_PROVIDER} {code or 'error'}: {text}"
    if code in _UNAVAILABLE_CODES or status in RETRYABLE:
        return ModelUnavailable(
            message,
            provider=_PROVIDER,
            status=status,
            retry_after=retry_after(meta.get("HTTPHeaders") or {}),
        )
    if bedrock_too_long(code, text):
        return PromptTooLong(message, provider=_PROVIDER, status=status)
    return ModelRejected(message, provider=_PROVIDER, status=status)
