"""How each provider says a prompt is over its model's context window.

A context-limit rejection is the one 400 with a remedy: the engine compacts the
prompt and asks again (``PromptTooLong``). Every other 400 is permanent
(``ModelRejected``, with the provider's message). The providers word it in several
ways, new and old, so each gets a table here; a 413 (a body too large to accept)
is shrinking's job too and is recognised by its status in ``signoff.models._http``.

The wordings, as the providers sent them (quoted from public reports):

Anthropic, 400 ``invalid_request_error``:
- "prompt is too long: 204661 tokens > 200000 maximum" (the older wording, still sent;
  boldsoftware/exe.dev#62, anthropics/claude-code#24020);
- "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000,
  decrease input length or `max_tokens` and try again" (today's, when the prompt plus
  ``max_tokens`` does not fit; docker/docker-agent#569, continuedev/continue#6080),
  also seen without the backticks (stackblitz/bolt.new#7414).

OpenAI and compatible servers, 400 with ``code: context_length_exceeded``:
- "This model's maximum context length is 8192 tokens. However, your messages resulted
  in 8227 tokens. Please reduce the length of the messages." (crewAIInc/crewAI-examples#121);
- "This model's maximum context length is 4097 tokens, however you requested 4231 tokens
  (3975 in your prompt; 256 for the completion)..." (the older wording; vLLM and DeepSeek
  still send it, often without a code; hwchase17/chat-your-data#10);
- "Your input exceeds the context window of this model. Please adjust your input and
  try again." (gpt-5 models, the Responses wording; anomalyco/opencode#6071);
- "This endpoint's maximum context length is 32768 tokens..." (OpenRouter; refly-ai/refly#1177).

Bedrock, ``ValidationException`` (HTTP 400):
- "Input is too long for requested model." (aws-samples/assessment-generator#2,
  continuedev/continue#9592);
- "The model returned the following errors: prompt is too long: 227255 tokens > 200000
  maximum" (Claude on Bedrock; aaif-goose/goose#7442, daisuke-awaji/moca#254);
- "The model returned the following errors: input length and `max_tokens` exceed context
  limit: ..." (Claude on Bedrock, the wording above);
- "Too many input tokens. Max input tokens: 8192, request input token count: 9279"
  (Titan and other Bedrock-hosted models);
- "This model's maximum context length is ..." (open-weight models on Bedrock).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from signoff.models._http import ProviderError

__all__ = ["anthropic_too_long", "bedrock_too_long", "openai_too_long"]

# Claude's two wordings, wherever it runs (Anthropic's API and Bedrock).
_CLAUDE = r"prompt is too long|input length and `?max_tokens`? exceed(?:s)? context limit"
# OpenAI's wordings, which OpenAI-compatible servers and Bedrock's open models copy.
_OPENAI = r"maximum context length|exceeds? the context window"

_ANTHROPIC_TOO_LONG = re.compile(_CLAUDE, re.IGNORECASE)
_OPENAI_TOO_LONG = re.compile(_OPENAI, re.IGNORECASE)
_BEDROCK_TOO_LONG = re.compile(
    rf"input is too long|too many input tokens|{_CLAUDE}|{_OPENAI}", re.IGNORECASE
)
_OPENAI_CODES = frozenset({"context_length_exceeded"})


def anthropic_too_long(error: ProviderError) -> bool:
    """Whether Anthropic's 400 says the prompt is over the context window."""
    return _ANTHROPIC_TOO_LONG.search(error.message) is not None


def openai_too_long(error: ProviderError) -> bool:
    """Whether an OpenAI-compatible 400 says the prompt is over the context window."""
    return error.code in _OPENAI_CODES or _OPENAI_TOO_LONG.search(error.message) is not None


def bedrock_too_long(code: str, message: str) -> bool:
    """Whether a Bedrock error (its code and message) says the prompt is over the window."""
    return code == "ValidationException" and _BEDROCK_TOO_LONG.search(message) is not None
