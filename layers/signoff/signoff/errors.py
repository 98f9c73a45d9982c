"""The one exception tree of signoff.

::

    SignoffError
    ├── ConfigError            bad agent.yaml / actauth.yml / tools.py (file, field)
    ├── UnknownAgent           no such agent (name, known)
    ├── UsageError             a caller asked for something it cannot have (message)
    ├── ModelError             a model provider failed
    │   ├── ModelUnavailable   transient: 429 / 5xx / timeout (retryable, retry_after)
    │   ├── PromptTooLong      the provider rejected the prompt as too large
    │   └── ModelRejected      permanent: bad key, bad request, unknown model
    └── ResolutionError        a decision that cannot be applied
        └── UnknownPending     a resolution for a call that was never asked about

Adapters translate vendor errors into these (``raise ... from exc``); nothing above
an adapter catches a botocore or httpx exception.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ModelError",
    "ModelRejected",
    "ModelUnavailable",
    "PromptTooLong",
    "ResolutionError",
    "SignoffError",
    "UnknownAgent",
    "UnknownPending",
    "UsageError",
]


class SignoffError(Exception):
    """Base of every error signoff raises on purpose."""


class ConfigError(SignoffError):
    """A configuration file is invalid; names the file and the field."""

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {problem}")


class UnknownAgent(SignoffError):
    """No agent of that name exists."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        listing = ", ".join(known) if known else "none"
        super().__init__(f"unknown agent {name!r}; agents: {listing}")


class UsageError(SignoffError):
    """The caller asked for something the current setup cannot do."""


class ModelError(SignoffError):
    """A model provider call failed."""

    def __init__(self, message: str, *, provider: str, status: int | None = None) -> None:
        self.provider = provider
        self.status = status
        super().__init__(message)


class ModelUnavailable(ModelError):
    """A transient failure worth retrying (rate limit, server error, timeout)."""

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status=status)
        self.retry_after = retry_after


class PromptTooLong(ModelError):
    """The provider rejected the prompt as larger than its context window."""


class ModelRejected(ModelError):
    """A permanent failure: retrying the same request cannot succeed."""


class ResolutionError(SignoffError):
    """A human decision could not be applied to a turn."""


class UnknownPending(ResolutionError):
    """A resolution names a tool call the turn never asked about."""

    def __init__(self, call_id: str, asked: str | None) -> None:
        self.call_id = call_id
        self.asked = asked
        super().__init__(
            f"no decision was asked for call {call_id!r}"
            + (f"; the turn is waiting on {asked!r}" if asked else "; the turn is not waiting")
        )
