"""What the inbound chat-app requests (Slack interactions, Lark callbacks) check and read alike.

Each vendor module keeps its own signature scheme and payload shape; the rules
they share live here once: a signed timestamp older than five minutes is a
replay, anything unexpected while authenticating is ``InvalidSignature`` (401)
and anything unexpected in an authenticated body is ``BadForm`` (400), so
attacker input never ends in a 500. ``ButtonPress`` is what every click carries.
"""

from __future__ import annotations

import hmac
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from signoff.errors import BadForm, InvalidSignature

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = [
    "TOLERANCE_SECONDS",
    "ButtonPress",
    "check_digest",
    "check_timestamp",
    "object_at",
    "signature_headers",
    "text_at",
    "unforeseen_as_bad_form",
    "unforeseen_as_invalid_signature",
]

TOLERANCE_SECONDS: Final = 5 * 60


@dataclass(frozen=True, kw_only=True)
class ButtonPress:
    """A click on a signoff button: which kind of button, on which pending item, what answer."""

    kind: Literal["approve", "deny", "answer", "open"]
    pending_id: str
    answer: str | None = None

    @property
    def decision(self) -> Literal["approve", "deny"] | None:
        """``approve`` / ``deny`` for the approval buttons, else ``None``."""
        if self.kind == "approve" or self.kind == "deny":
            return self.kind
        return None


@contextmanager
def unforeseen_as_invalid_signature(source: str) -> Iterator[None]:
    """Authenticating: any error but ``InvalidSignature`` (odd header types, a non-ASCII
    signature, surrogates in the body) becomes one, so the caller answers 401, never 500.
    """
    try:
        yield
    except InvalidSignature:
        raise
    except Exception as exc:
        raise InvalidSignature(source, f"unreadable request: {type(exc).__name__}") from exc


@contextmanager
def unforeseen_as_bad_form(field: str) -> Iterator[None]:
    """Reading an authenticated body: a shape we did not foresee is still a malformed
    form to the caller (400, about ``field``), never an unhandled error.
    """
    try:
        yield
    except BadForm:
        raise
    except Exception as exc:
        raise BadForm(field, f"unreadable ({type(exc).__name__})") from exc


def signature_headers(source: str, headers: Mapping[str, str], *names: str) -> list[str]:
    """The values of ``names`` (lower-case), looked up whatever their case in ``headers``.

    Raises:
        InvalidSignature: one of them is missing.
    """
    lowered = {str(key).lower(): value for key, value in headers.items()}
    values = [lowered.get(name) for name in names]
    found = [value for value in values if isinstance(value, str)]
    if len(found) != len(names):
        raise InvalidSignature(source, "missing signature headers")
    return found


def check_timestamp(source: str, timestamp: str, now: float) -> None:
    """Refuse a signed timestamp that is not plain Unix seconds or is five minutes from ``now``.

    Raises:
        InvalidSignature: not a Unix time, or outside the window (a replay).
    """
    # Plain digits only: int() would also take " 12", "+12" and "1_2".
    if not timestamp.isascii() or not timestamp.isdigit():
        raise InvalidSignature(source, "timestamp is not a Unix time")
    if abs(now - int(timestamp)) > TOLERANCE_SECONDS:
        raise InvalidSignature(source, "timestamp outside the five-minute window")


def check_digest(source: str, expected: str, signature: str) -> None:
    """Compare the signature sent with the one computed, in constant time.

    Raises:
        InvalidSignature: they differ.
    """
    # compare_digest on str needs ASCII on both sides; encoding keeps it constant-time
    # and lets a non-ASCII header fail as a mismatch rather than a TypeError.
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        raise InvalidSignature(source, "signature mismatch")


def object_at(parent: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``parent[key]`` when it is a JSON object, else an empty one."""
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def text_at(parent: Mapping[str, Any], key: str) -> str | None:
    """``parent[key]`` when it is a non-empty string, else ``None``."""
    value = parent.get(key)
    return value if isinstance(value, str) and value else None
