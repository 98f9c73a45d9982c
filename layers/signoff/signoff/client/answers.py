"""What the API's answers say: an error answer's exception, a decision already taken, a
route the server does not have."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from signoff.errors import (
    Absent,
    BadInput,
    Conflict,
    Forbidden,
    Gone,
    SignoffError,
    Unauthorized,
    Unavailable,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["error_for", "no_route", "taken"]

_FAMILIES: Final[dict[int, type[SignoffError]]] = {
    400: BadInput,
    401: Unauthorized,
    403: Forbidden,
    404: Absent,
    409: Conflict,
    410: Gone,
}


def error_for(response: httpx.Response) -> SignoffError:
    """The exception an error answer stands for (its family, by status; ``detail`` says why)."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    detail = str(body.get("detail") or body.get("message") or response.reason_phrase)
    code = body.get("error")
    text = f"{code}: {detail}" if code else detail
    family = _FAMILIES.get(response.status_code)
    if family is None:
        family = Unavailable if response.status_code >= 500 else BadInput
    return family(f"{text} (HTTP {response.status_code})")


def _code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return str(body.get("error")) if isinstance(body, dict) else None


def taken(response: httpx.Response) -> bool:
    """Whether a decision sent again was answered "the first sending was taken".

    ``already_resolved``: the item is decided (the first sending decided it, or a
    later vote did). ``already_voted`` with ``resent``: the vote on record is this
    very one (the same actor, channel and decision), short of the item's quorum.
    Any other ``already_voted`` is a vote cast elsewhere: an error.
    """
    if response.status_code != 409:
        return False
    code = _code(response)
    if code == "already_resolved":
        return True
    return code == "already_voted" and response.json().get("resent") is True


def no_route(response: httpx.Response) -> bool:
    """A 404 for a route the server does not have (not an unknown agent or session)."""
    if response.status_code not in (404, 405):
        return False
    try:
        body = response.json()
    except ValueError:
        return True
    detail = str(body.get("detail", "")) if isinstance(body, dict) else ""
    # API Gateway's own 404 ({"message": "Not Found"}) or the API's catch-all route.
    return response.status_code == 405 or not detail or detail.startswith("no route ")
