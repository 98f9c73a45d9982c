"""The providers' conversation rules as checkers over the requests signoff renders.

Type checks (botocore's Stubber, the SDKs' request types) accept a request whose
conversation the provider then refuses: one starting with the assistant, a tool
result without its call. These checkers hold the rules the providers enforce on the
conversation itself, each returning the rules a request breaks (empty when none):

- ``converse_violations(params)``: Bedrock Converse's ``converse`` keyword arguments
  ("A conversation must start with a user message", roles alternate, every toolUse
  answered by exactly its toolResults in the next user message, no blank text).
- ``anthropic_violations(body)``: the Messages API body (the same rules, with
  ``tool_result`` blocks first in their user message).
- ``openai_violations(body)``: the chat completions body (every assistant
  ``tool_calls`` message followed by one ``tool`` message per call id, and a ``tool``
  message only there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "anthropic_violations",
    "assert_valid",
    "converse_violations",
    "openai_violations",
]

_CONVERSE_BLOCKS = frozenset(
    {"text", "toolUse", "toolResult", "image", "document", "reasoningContent"}
)


def assert_valid(provider: str, request: dict[str, Any]) -> None:
    """Fails with every broken rule when ``request`` breaks ``provider``'s conversation rules."""
    check = {
        "bedrock": converse_violations,
        "anthropic": anthropic_violations,
        "openai": openai_violations,
    }[provider]
    broken = check(request)
    assert not broken, f"{provider} would refuse this conversation: {broken}"


def converse_violations(params: dict[str, Any]) -> list[str]:
    """The Converse conversation rules ``params`` (``client.converse`` keywords) break."""
    broken: list[str] = []
    for index, block in enumerate(params.get("system") or []):
        if "text" in block and not block["text"].strip():
            broken.append(f"system.{index}: blank text")
    messages = params.get("messages") or []
    parsed: list[list[tuple[str, dict[str, Any]]]] = []
    for index, message in enumerate(messages):
        found = []
        for position, block in enumerate(message["content"]):
            kinds = [key for key in block if key in _CONVERSE_BLOCKS]
            if len(kinds) != 1 or len(block) != 1:
                broken.append(
                    f"messages.{index}.content.{position}: a content block holds exactly one "
                    f"member, not {sorted(block)}"
                )
                continue
            kind = kinds[0]
            if kind == "text" and not block["text"].strip():
                broken.append(f"messages.{index}.content.{position}: blank text")
            found.append((kind, block[kind]))
        if not found:
            broken.append(f"messages.{index}: no content")
        parsed.append(found)
    ids = {id(message): blocks for message, blocks in zip(messages, parsed, strict=True)}

    def uses(message: dict[str, Any]) -> list[str]:
        return [body["toolUseId"] for kind, body in ids[id(message)] if kind == "toolUse"]

    def results(message: dict[str, Any]) -> list[str]:
        return [body["toolUseId"] for kind, body in ids[id(message)] if kind == "toolResult"]

    broken += _block_rules(messages, uses, results, names=("toolUse", "toolResult"))
    return broken


def anthropic_violations(body: dict[str, Any]) -> list[str]:
    """The Messages API conversation rules ``body`` breaks."""
    broken: list[str] = []
    if "system" in body and not str(body["system"]).strip():
        broken.append("system: blank")
    messages = body.get("messages") or []

    def of_type(message: dict[str, Any], kind: str, key: str) -> list[str]:
        content = message["content"]
        if isinstance(content, str):
            return []
        return [block[key] for block in content if block["type"] == kind]

    def uses(message: dict[str, Any]) -> list[str]:
        return of_type(message, "tool_use", "id")

    def results(message: dict[str, Any]) -> list[str]:
        return of_type(message, "tool_result", "tool_use_id")

    broken += _block_rules(messages, uses, results, names=("tool_use", "tool_result"))
    for index, message in enumerate(messages):
        content = message["content"]
        if isinstance(content, str):
            if not content.strip():
                broken.append(f"messages.{index}: blank text")
            continue
        if not content:
            broken.append(f"messages.{index}: no content")
        for position, block in enumerate(content):
            if block["type"] == "text" and not block["text"].strip():
                broken.append(f"messages.{index}.content.{position}: blank text")
        if message["role"] == "user":
            kinds = [block["type"] for block in content]
            if (
                "tool_result" in kinds
                and "text" in kinds
                and kinds.index("text") < _last(kinds, "tool_result")
            ):
                broken.append(f"messages.{index}: tool_result blocks must come first")
    return broken


def openai_violations(body: dict[str, Any]) -> list[str]:
    """The chat completions conversation rules ``body`` breaks."""
    broken: list[str] = []
    messages = body.get("messages") or []
    roles = [message["role"] for message in messages]
    if "system" in roles[1:] or "developer" in roles[1:]:
        broken.append("a system message after the first message")
    if not any(role == "user" for role in roles):
        broken.append("no user message")
    seen: set[str] = set()
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message["role"] == "tool":
            broken.append(
                f"messages.[{index - 1}]: a 'tool' message must be a response to a preceding "
                "message with 'tool_calls'"
            )
            continue
        if message["role"] != "assistant" or not message.get("tool_calls"):
            continue
        if message.get("content") == "":
            broken.append(f"messages.[{index - 1}]: empty content beside tool_calls")
        ids = [call["id"] for call in message["tool_calls"]]
        if len(set(ids)) != len(ids) or seen & set(ids):
            broken.append(f"messages.[{index - 1}]: a tool call id is used twice")
        seen |= set(ids)
        answered: list[str] = []
        while index < len(messages) and messages[index]["role"] == "tool":
            answered.append(messages[index]["tool_call_id"])
            index += 1
        missing = [call_id for call_id in ids if call_id not in answered]
        if missing:
            broken.append(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. Missing: {missing}"
            )
        strangers = [call_id for call_id in answered if call_id not in ids]
        if strangers or len(answered) != len(set(answered)):
            broken.append(f"tool messages answer unknown or repeated ids: {answered} for {ids}")
    return broken


def _block_rules(
    messages: list[dict[str, Any]],
    uses: Callable[[dict[str, Any]], list[str]],
    results: Callable[[dict[str, Any]], list[str]],
    *,
    names: tuple[str, str],
) -> list[str]:
    """The rules Converse and the Messages API share over role/content-block messages.

    ``names`` are the provider's words for a tool use and a tool result.
    """
    use, result = names
    broken: list[str] = []
    if not messages:
        return ["no messages"]
    if messages[0]["role"] != "user":
        broken.append("A conversation must start with a user message")
    if messages[-1]["role"] != "user":
        broken.append("the conversation must end with a user message (no prefill)")
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if message["role"] not in ("user", "assistant"):
            broken.append(f"messages.{index}: role {message['role']!r}")
        if index and messages[index - 1]["role"] == message["role"]:
            broken.append(f"messages.{index}: roles must alternate")
        if message["role"] == "assistant" and results(message):
            broken.append(f"messages.{index}: a {result} in an assistant message")
        if message["role"] == "user" and uses(message):
            broken.append(f"messages.{index}: a {use} in a user message")
        called = uses(message)
        if len(set(called)) != len(called) or seen & set(called):
            broken.append(f"messages.{index}: a tool use id is used twice")
        seen |= set(called)
        answered = results(message)
        previous = uses(messages[index - 1]) if index else []
        strangers = [call_id for call_id in answered if call_id not in previous]
        if strangers:
            broken.append(
                f"messages.{index}: tool results {strangers} answer no tool use of the "
                "previous message"
            )
        if len(set(answered)) != len(answered):
            broken.append(f"messages.{index}: a tool use is answered twice")
        if called:
            following = results(messages[index + 1]) if index + 1 < len(messages) else []
            missing = [call_id for call_id in called if call_id not in following]
            if missing:
                broken.append(
                    f"messages.{index}: tool uses {missing} have no result in the next message"
                )
    return broken


def _last(items: list[str], value: str) -> int:
    return len(items) - 1 - items[::-1].index(value)
