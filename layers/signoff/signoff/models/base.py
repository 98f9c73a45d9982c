"""The model port: one method from a request to a response."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from signoff.messages import ModelRequest, ModelResponse

__all__ = ["ModelCall"]


class ModelCall(Protocol):
    """Calls a language model once.

    Raises:
        ModelUnavailable: a transient failure (rate limit, 5xx, timeout).
        PromptTooLong: the prompt exceeds the model's context window.
        ModelRejected: a permanent failure (bad key, malformed request).
    """

    def __call__(self, request: ModelRequest) -> ModelResponse: ...
