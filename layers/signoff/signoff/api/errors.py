"""HTTP status codes from errors: the one table, registered with the resolver."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response

from signoff.errors import (
    Absent,
    AlreadyResolved,
    AlreadyVoted,
    AuthFailed,
    BadInput,
    ConfigError,
    Conflict,
    Expired,
    Forbidden,
    Gone,
    InvalidChanges,
    MethodNotAllowed,
    Misconfigured,
    ModelError,
    ModelUnavailable,
    NotEditable,
    PayloadTooLarge,
    SendFailed,
    SessionBusy,
    SignoffError,
    TokenForged,
    Unavailable,
    UnsupportedMediaType,
)
from signoff.telemetry import logger

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

__all__ = [
    "STATUS",
    "error_payload",
    "error_response",
    "register_error_handlers",
    "status_of",
    "validation_detail",
]

_WITHHELD = "the request could not be completed"
_MISCONFIGURED = (
    "the configuration of this agent or of its channels is invalid; an operator has to fix "
    "it (the function's log names the file and field)"
)

# (status, error code) per family of ``signoff.errors``, then the few errors that
# refine their family's answer; the most specific class in the MRO wins. Every
# error is in a family, so every error has a status here (a test walks the tree).
STATUS: dict[type[BaseException], tuple[int, str]] = {
    BadInput: (400, "bad_request"),
    AuthFailed: (401, "unauthorized"),
    Absent: (404, "not_found"),
    Conflict: (409, "conflict"),
    Gone: (410, "expired"),
    Misconfigured: (500, "misconfigured"),
    Unavailable: (503, "unavailable"),
    # refinements, each inside its family's class of status (4xx / 5xx)
    Forbidden: (403, "forbidden"),
    TokenForged: (403, "forbidden"),
    MethodNotAllowed: (405, "method_not_allowed"),
    InvalidChanges: (422, "invalid_changes"),
    NotEditable: (422, "not_editable"),
    AlreadyResolved: (409, "already_resolved"),
    AlreadyVoted: (409, "already_voted"),
    PayloadTooLarge: (413, "payload_too_large"),
    UnsupportedMediaType: (415, "unsupported_media_type"),
    ConfigError: (500, "agent_misconfigured"),
    ModelError: (502, "model_failed"),
    ModelUnavailable: (503, "model_unavailable"),
    SendFailed: (502, "send_failed"),
    # raised bare by dev tools only
    SignoffError: (500, "internal_error"),
}


def status_of(error: BaseException) -> tuple[int, str]:
    """The status and error code of ``error``: its own row, else its family's."""
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500, "internal_error"


def error_response(
    status: int,
    error: str,
    detail: str,
    *,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> Response[str]:
    body = {"error": error, "detail": detail, **extra}
    return Response(
        status_code=status,
        content_type="application/json",
        body=json.dumps(body),
        headers=dict(headers or {}),
    )


def error_payload(error: BaseException) -> tuple[int, dict[str, Any]]:
    """The status and ``{error, detail, ...}`` body for ``error``; a 500 says nothing more."""
    if not isinstance(error, SignoffError):
        return 500, {"error": "internal_error", "detail": _WITHHELD}
    status, code = status_of(error)
    # A channel's failure quotes the vendor's error, which can name the address it
    # sent to (a Slack or webhook URL is itself a secret): the client gets the code only.
    withheld = status == 500 or isinstance(error, SendFailed)
    detail = _WITHHELD if withheld else str(error)
    if isinstance(error, ConfigError):
        # Clear about what is wrong, without the deployment's paths and settings.
        detail = _MISCONFIGURED
    return status, {"error": code, "detail": detail, **_extra(error)}


def validation_detail(errors: Iterable[Mapping[str, Any]]) -> str:
    """Pydantic's validation errors as one line: ``field: problem; ...``."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'body'}: {e.get('msg')}"
        for e in errors
    )
    return problems or "invalid request"


def _extra(error: BaseException) -> dict[str, Any]:
    """Data a client needs to act on a conflict: the current state, what the session waits on."""
    if isinstance(error, AlreadyResolved | Expired | AlreadyVoted):
        current = error.current
        voter = (
            {"person": error.person, "resent": error.resent}
            if isinstance(error, AlreadyVoted)
            else {}
        )
        return voter | {
            "current": {
                "id": current.id,
                "status": current.status,
                "resolvedBy": current.resolved_by,
                "resolvedVia": current.resolved_via,
                "resolvedAt": current.resolved_at,
            }
        }
    if isinstance(error, SessionBusy):
        return {"sessionStatus": error.status, "pendingId": error.pending_id}
    if isinstance(error, MethodNotAllowed):
        return {"allowed": error.allowed}
    if isinstance(error, UnsupportedMediaType):
        return {"accepted": error.accepted}
    if isinstance(error, InvalidChanges):
        return {"fields": error.fields}
    return {}


def register_error_handlers(app: APIGatewayHttpResolver) -> None:
    """Every error becomes ``{error, detail}`` with its status; nothing leaks a trace."""
    from aws_lambda_powertools.event_handler.openapi.exceptions import (
        RequestUnsupportedContentType,
        RequestValidationError,
    )

    @app.exception_handler(RequestValidationError)
    def invalid(error: RequestValidationError) -> Response[str]:
        return error_response(400, "bad_request", validation_detail(error.errors()))

    @app.exception_handler(RequestUnsupportedContentType)
    def unsupported(error: RequestUnsupportedContentType) -> Response[str]:
        # The body gate (signoff.api.body) refuses these first; Powertools' own
        # refusal must still be a 415, not the catch-all's 500.
        return error_response(415, "unsupported_media_type", validation_detail(error.errors()))

    @app.exception_handler(SignoffError)
    def known(error: SignoffError) -> Response[str]:
        status, body = error_payload(error)
        if status >= 500:
            # The type and message only: no traceback (it may quote arguments) in any log.
            logger.error(
                "request failed",
                extra={
                    "error_code": body["error"],
                    "error_type": type(error).__name__,
                    "error": str(error),
                },
            )
        return Response(status_code=status, content_type="application/json", body=json.dumps(body))

    @app.exception_handler(Exception)
    def unexpected(error: Exception) -> Response[str]:
        logger.error("unexpected error", extra={"error_type": type(error).__name__})
        return error_response(500, "internal_error", _WITHHELD)
