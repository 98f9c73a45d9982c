"""Request bodies: what each route takes, and the checks every body passes before a handler.

One gate for every route of both functions (``serve`` runs it before routing),
so no handler, validator or parser ever meets bytes it cannot read:

0. a path segment over ``MAX_SEGMENT_BYTES`` names nothing this API issues
   (ids, agent names, tokens are far shorter): 404 before any store lookup,
   which DynamoDB would refuse past its 2,048-byte key limit (a 503);
1. a body over the limit is a 413, measured on the bytes actually sent;
2. a body sent base64-encoded must decode (400);
3. its media type must be one the route takes (415) — a route's own
   ``requestBody`` (``openapi_extensions``) names it, a route with a body model
   takes JSON, and a route that reads no body accepts at most a JSON one, which
   it ignores. A body without a content type is refused too: guessing JSON
   would let a browser's cross-site ``text/plain``-less post through;
4. it must be UTF-8 (400) — the handlers and Powertools decode it as such;
5. JSON must be strict and bounded (400): no ``NaN``/``Infinity``, at most
   ``MAX_DEPTH`` levels of nesting, integers of at most ``MAX_INT_DIGITS``
   digits. Python's parser would otherwise raise ``RecursionError`` on deep
   nesting and ``ValueError`` past its int-from-str limit: 500s, not 400s.

The event that goes on has the checked body as text (``isBase64Encoded``
false), so a handler's ``decoded_body`` cannot fail.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any, Final

from signoff.errors import MalformedRequest, NotFound, PayloadTooLarge, UnsupportedMediaType

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.api_gateway import Route

__all__ = [
    "FORM",
    "JSON",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_SEGMENT_BYTES",
    "accepted_media",
    "checked_event",
    "form_body",
    "is_page",
    "parse_json",
    "read_body",
]

JSON: Final = "application/json"
FORM: Final = "application/x-www-form-urlencoded"
# Deeper than any body of this API; far below the parser's recursion limit.
MAX_DEPTH: Final = 32
# Longer integers are no id, count or amount this API takes.
MAX_INT_DIGITS: Final = 64
# Longer than any id, agent name or resume token; far below DynamoDB's key limit.
MAX_SEGMENT_BYTES: Final = 1024
_WITH_BODY: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def form_body(
    properties: dict[str, Any], *, patterns: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``openapi_extensions`` documenting a form body that a route reads itself.

    ``patterns``: fields named by a pattern (``patternProperties``), e.g. ``arg.<name>``.
    """
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if patterns:
        schema["patternProperties"] = patterns
    return {"requestBody": {"required": True, "content": {FORM: {"schema": schema}}}}


def accepted_media(route: Route) -> tuple[str, ...]:
    """The media types ``route``'s body may have (JSON for a route that reads none)."""
    declared = (route.openapi_extensions or {}).get("requestBody", {}).get("content")
    return tuple(declared) if declared else (JSON,)


def is_page(route: Route | None) -> bool:
    """Whether ``route`` answers with HTML pages (its errors are pages too)."""
    ok = (route.responses or {}).get(200, {}) if route is not None else {}
    return "text/html" in (ok.get("content") or {})


def checked_event(event: dict[str, Any], route: Route | None, limit: int) -> dict[str, Any]:
    """``event`` with its body checked and decoded to text (see the module's docstring).

    Raises:
        PayloadTooLarge: the body is over ``limit`` bytes.
        MalformedRequest: bad base64, not UTF-8, or JSON that is malformed or out of bounds.
        UnsupportedMediaType: a body of a type the route does not take.
        NotFound: a path segment longer than anything this API issues.
    """
    path = str(event.get("rawPath") or "")
    if route is not None and any(
        len(segment.encode("utf-8", "replace")) > MAX_SEGMENT_BYTES for segment in path.split("/")
    ):
        raise NotFound("path segment", f"{path[:64]}…")
    method = str(event.get("requestContext", {}).get("http", {}).get("method", "")).upper()
    raw = event.get("body") or ""
    if route is None or not raw or method not in _WITH_BODY:
        # A body no route reads (no route at all: a 404 or 405) is dropped, never decoded.
        return {**event, "body": None, "isBase64Encoded": False} if raw else event
    encoded = bool(event.get("isBase64Encoded"))
    # Cheap first: a body far over the limit is refused before it is decoded.
    estimate = len(raw) * 3 // 4 if encoded else len(raw)
    if estimate > limit * 4:
        raise PayloadTooLarge(estimate, limit)
    data = _bytes(raw, encoded)
    if len(data) > limit:
        raise PayloadTooLarge(len(data), limit)
    if not data:
        return {**event, "body": None, "isBase64Encoded": False}
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    text = read_body(data, headers.get("content-type", ""), accepted_media(route))
    return {**event, "body": text, "isBase64Encoded": False}


def read_body(data: bytes, content_type: str, accepted: tuple[str, ...]) -> str:
    """A non-empty body as text, once its media type, encoding and (for JSON) syntax pass.

    Raises:
        UnsupportedMediaType: ``content_type`` is none of ``accepted``.
        MalformedRequest: not UTF-8, or JSON that is malformed or out of bounds.
    """
    media = content_type.split(";", 1)[0].strip().lower()
    if media not in accepted:
        raise UnsupportedMediaType(media, list(accepted))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedRequest("the body is not UTF-8") from None
    if media == JSON:
        parse_json(text)
    return text


def parse_json(text: str) -> Any:
    """``text`` as strict, bounded JSON.

    Raises:
        MalformedRequest: not JSON, ``NaN``/``Infinity``, too deep, or an integer too long.
    """
    try:
        value = json.loads(text, parse_int=_integer, parse_constant=_no_constant)
    except RecursionError:
        raise MalformedRequest(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, and the hooks' refusals
        raise MalformedRequest(f"the body is not valid JSON: {exc}") from None
    if _depth(value) > MAX_DEPTH:
        raise MalformedRequest(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _bytes(raw: str | bytes, encoded: bool) -> bytes:
    if isinstance(raw, bytes):
        return raw
    if not encoded:
        # API Gateway hands text bodies over as str; surrogates never came from UTF-8.
        try:
            return raw.encode("utf-8")
        except UnicodeEncodeError:
            raise MalformedRequest("the body is not UTF-8") from None
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise MalformedRequest("the body is marked base64 but does not decode") from None


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer longer than {MAX_INT_DIGITS} digits")
    return int(digits)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth(value: Any) -> int:
    """How deeply ``value``'s arrays and objects nest (iterative: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            children = node.values() if isinstance(node, dict) else node
            if level <= MAX_DEPTH:
                stack.extend((child, level + 1) for child in children)
    return deepest
