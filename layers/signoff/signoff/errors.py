"""The one exception tree of signoff, in families.

Every error belongs to exactly one family: what went wrong, from the caller's
side. The HTTP status of an error comes from its family (``signoff.api.errors``
holds the one table, with a few refinements inside a family); a new error
picks its family and needs no new row. What each error carries is in brackets.

::

    SignoffError                   (raised bare only by dev tools: an internal error)
    ├── BadInput                   the request or a call is wrong; changing it can fix it
    │   ├── UsageError             a caller asked for something it cannot have (message)
    │   ├── BadForm                a submitted HTML form is malformed (field, problem)
    │   ├── MalformedRequest       a body that cannot be read: bad base64, UTF-8, JSON (problem)
    │   ├── PayloadTooLarge        a request body over the documented limit (size, limit)
    │   ├── UnsupportedMediaType   a body of a type the route does not take (media_type, accepted)
    │   ├── MethodNotAllowed       a known path with another method (method, allowed)
    │   └── InvalidChanges         an approver's changed arguments the tool refuses (tool, fields)
    │       └── NotEditable        changes to a tool that does not take them (tool)
    ├── AuthFailed                 who is asking could not be established, or may not ask this
    │   ├── Unauthorized           no API key, or one that is unknown or revoked
    │   ├── InvalidSignature       a signed Slack / Lark request did not verify (source, reason)
    │   ├── Forbidden              a known caller asked for what its tenant may not have
    │   └── TokenForged            a resume token is malformed, wrongly signed or of an unknown key
    ├── Conflict                   the state of a record does not allow it now
    │   ├── SessionBusy            another turn holds the session (session_id, status, pending_id)
    │   ├── LeaseLost              this process no longer holds the session's lease (session_id)
    │   └── ResolutionError        a decision that cannot be applied (message)
    │       ├── UnknownPending     a resolution for a call never asked about (call_id, asked)
    │       ├── AlreadyResolved    the pending item was resolved before (current item)
    │       └── AlreadyVoted       this person voted on the item before (current item, person)
    ├── Gone                       it existed, and its time ran out
    │   ├── Expired                the pending item's time ran out (current item)
    │   └── TokenExpired           a genuine resume token past its expiry (expired_at, pending_id)
    ├── Absent                     nothing of that name
    │   ├── NotFound               no such session / pending item (kind, key)
    │   └── UnknownAgent           no such agent (name, known)
    ├── Unavailable                a service signoff depends on failed; for some, retrying helps
    │   ├── StoreUnavailable       the store failed transiently (message)
    │   │   └── TransactionConflicted  other writes to its items kept cancelling a transaction
    │   ├── ModelError             a model provider failed (provider, status)
    │   │   ├── ModelUnavailable   transient: 429 / 5xx / timeout (retry_after)
    │   │   ├── PromptTooLong      the provider rejected the prompt as too large
    │   │   └── ModelRejected      permanent: bad key, bad request, unknown model
    │   └── SendFailed             a notification channel did not deliver (channel, reason,
    │                              retryable, status, retry_after, receipt)
    └── Misconfigured              the deployment or an agent is set up wrongly (an operator's fix)
        ├── ConfigError            bad agent.yaml / actauth.yml / tools.py (file, field, problem)
        └── SecretMissing          a secret source has no usable secret of that name (name, reason)

Adapters translate vendor errors into these (``raise ... from exc``); nothing above
an adapter catches a botocore or httpx exception. Catch a concrete error where
the code acts on it; catch a family where any of its members means the same.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "FAMILIES",
    "Absent",
    "AlreadyResolved",
    "AlreadyVoted",
    "AuthFailed",
    "BadForm",
    "BadInput",
    "ConfigError",
    "Conflict",
    "Expired",
    "Forbidden",
    "Gone",
    "InvalidChanges",
    "InvalidSignature",
    "LeaseLost",
    "MalformedRequest",
    "MethodNotAllowed",
    "Misconfigured",
    "ModelError",
    "ModelOutOfTime",
    "ModelRejected",
    "ModelUnavailable",
    "NotEditable",
    "NotFound",
    "PayloadTooLarge",
    "PromptTooLong",
    "ResolutionError",
    "SecretMissing",
    "SendFailed",
    "SessionBusy",
    "SignoffError",
    "StoreUnavailable",
    "TokenExpired",
    "TokenForged",
    "TransactionConflicted",
    "Unauthorized",
    "Unavailable",
    "UnknownAgent",
    "UnknownPending",
    "UnsupportedMediaType",
    "UsageError",
]


class SignoffError(Exception):
    """Base of every error signoff raises on purpose."""


class BadInput(SignoffError):
    """Family: the request or the call is wrong; the caller can fix it."""


class AuthFailed(SignoffError):
    """Family: who is asking could not be established, or they may not ask this."""


class Conflict(SignoffError):
    """Family: the current state of a record does not allow the change now."""


class Gone(SignoffError):
    """Family: the thing existed, and its time ran out."""


class Absent(SignoffError):
    """Family: nothing of that name exists."""


class Unavailable(SignoffError):
    """Family: a service signoff depends on (store, model provider, channel) failed."""


class Misconfigured(SignoffError):
    """Family: the deployment or an agent is set up wrongly; an operator has to fix it."""


# Every error signoff raises subclasses exactly one of these (a test walks the tree).
FAMILIES: tuple[type[SignoffError], ...] = (
    BadInput,
    AuthFailed,
    Conflict,
    Gone,
    Absent,
    Unavailable,
    Misconfigured,
)


class ConfigError(Misconfigured):
    """A configuration file is invalid; names the file and the field."""

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {problem}")


class UnknownAgent(Absent):
    """No agent of that name exists."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        listing = ", ".join(known) if known else "none"
        super().__init__(f"unknown agent {name!r}; agents: {listing}")


class UsageError(BadInput):
    """The caller asked for something the current setup cannot do."""


class ModelError(Unavailable):
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


class ModelOutOfTime(ModelUnavailable):
    """The invocation's time ran out before the model answered (``ModelRequest.timeout``).

    Not a failure of the turn: the engine yields, and the turn continues in a fresh
    invocation with a fresh budget.
    """


class PromptTooLong(ModelError):
    """The provider rejected the prompt as larger than its context window."""


class ModelRejected(ModelError):
    """A permanent failure: retrying the same request cannot succeed."""


class ResolutionError(Conflict):
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


class AlreadyResolved(ResolutionError):
    """The pending item was resolved already; ``current`` is the item as it is now."""

    def __init__(self, current: Any) -> None:
        self.current = current
        super().__init__(
            f"pending item {current.id} is already {current.status}"
            + (f" by {current.resolved_by}" if current.resolved_by else "")
        )


class AlreadyVoted(ResolutionError):
    """The person voted on an item that needs several before; ``current`` is the item now.

    ``resent``: that vote is this very one — the same actor, channel and decision — so
    the request was sent again (its first answer lost), not a second vote.
    """

    def __init__(self, current: Any, person: str, *, resent: bool = False) -> None:
        self.current = current
        self.person = person
        self.resent = resent
        super().__init__(f"{person} already voted on pending item {current.id}")


class Expired(Gone):
    """The pending item expired before it was resolved."""

    def __init__(self, current: Any) -> None:
        self.current = current
        super().__init__(f"pending item {current.id} expired")


class NotFound(Absent):
    """No record of that kind with that key."""

    def __init__(self, kind: str, key: str) -> None:
        self.kind = kind
        self.key = key
        super().__init__(f"no {kind} {key!r}")


class SessionBusy(Conflict):
    """Another turn holds the session, or it waits on a pending item."""

    def __init__(self, session_id: str, *, status: str, pending_id: str | None = None) -> None:
        self.session_id = session_id
        self.status = status
        self.pending_id = pending_id
        waiting = f"; it waits on pending item {pending_id}" if pending_id else ""
        super().__init__(f"session {session_id} is {status}{waiting}")


class LeaseLost(Conflict):
    """The session's lease expired and was taken by another process."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"lost the lease on session {session_id}")


class StoreUnavailable(Unavailable):
    """The store failed in a way that retrying may fix (throttling, a timeout)."""


class TransactionConflicted(StoreUnavailable):
    """Other requests kept writing an item of a transaction, so it was cancelled each
    time it was tried and wrote nothing. A port that can read the item again answers
    from what it finds (the state that won); elsewhere it is a store that is busy."""


class TokenForged(AuthFailed):
    """A resume token that was not issued by us: malformed, tampered with, or of an unknown key."""

    def __init__(self) -> None:
        # Deliberately one message for every cause: telling a forger which part
        # failed (format, key id, signature) would help the next attempt.
        super().__init__("the resume token is not valid")


class TokenExpired(Gone):
    """A genuine resume token whose expiry has passed."""

    def __init__(self, expired_at: int, *, pending_id: str | None = None) -> None:
        self.expired_at = expired_at
        # Safe to expose: only a correctly signed token reaches the expiry check.
        self.pending_id = pending_id
        super().__init__(f"the resume token expired at {expired_at} (epoch seconds)")


class SecretMissing(Misconfigured):
    """A secret source has no usable secret of that name; never carries the value."""

    def __init__(self, name: str, reason: str = "not set") -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"secret {name!r} is missing or unusable: {reason}")


class BadForm(BadInput):
    """A submitted HTML form is malformed (a repeated, missing or undecodable field)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        where = f"field {field!r}: " if field else ""
        super().__init__(f"bad form: {where}{problem}")


class Unauthorized(AuthFailed):
    """The caller could not be identified: no API key, or one that is unknown or revoked."""


class Forbidden(AuthFailed):
    """The caller is known, but its tenant may not do what it asked."""


class PayloadTooLarge(BadInput):
    """A request body larger than the API accepts."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"the body is {size} bytes; the limit is {limit}")


class MalformedRequest(BadInput):
    """A request whose body cannot be read: undecodable base64, not UTF-8, or bad JSON."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(f"malformed request: {problem}")


class UnsupportedMediaType(BadInput):
    """A body of a media type the route does not take (``accepted`` lists what it takes)."""

    def __init__(self, media_type: str, accepted: list[str]) -> None:
        self.media_type = media_type
        self.accepted = accepted
        sent = f"a body of type {media_type}" if media_type else "a body without a content type"
        takes = ", ".join(accepted) if accepted else "no body"
        super().__init__(f"{sent} is not accepted here; this route takes {takes}")


class MethodNotAllowed(BadInput):
    """The path exists, but not with this method."""

    def __init__(self, method: str, allowed: list[str]) -> None:
        self.method = method
        self.allowed = allowed
        super().__init__(f"{method} is not allowed here; use {', '.join(allowed)}")


class InvalidChanges(BadInput):
    """An approver changed a call's arguments in a way its tool refuses; ``fields`` names them."""

    def __init__(self, tool: str, fields: list[str], problem: str) -> None:
        self.tool = tool
        self.fields = fields
        super().__init__(f"the changed arguments of {tool} are invalid: {problem}")


class NotEditable(InvalidChanges):
    """Changed arguments for a tool that does not declare ``editable=True``."""

    def __init__(self, tool: str) -> None:
        BadInput.__init__(
            self, f"{tool} takes no changes to its arguments (its tool is not editable)"
        )
        self.tool = tool
        self.fields = []


class SendFailed(Unavailable):
    """A notification was not delivered; ``retryable`` says whether trying again can help."""

    def __init__(
        self,
        channel: str,
        reason: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        receipt: dict[str, str] | None = None,
    ) -> None:
        self.channel = channel
        self.reason = reason
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        # What went out before the failure (one recipient of several), kept for the retry.
        self.receipt = receipt
        super().__init__(f"{channel}: {reason}")


class InvalidSignature(AuthFailed):
    """An inbound request claiming to come from a service (Slack, Lark) failed verification."""

    def __init__(self, source: str, reason: str = "") -> None:
        # One message for every cause, as with TokenForged: naming the failing part
        # (header, timestamp, signature) to the caller would help a forger. ``reason``
        # is for our own logs (a skewed clock looks different from a forgery).
        self.source = source
        self.reason = reason
        super().__init__(f"the {source} request could not be verified")
