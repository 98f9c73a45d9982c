"""OpenAPI response descriptions shared by the routes: each route lists exactly what it answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from signoff.api.models import ErrorBody, FinishedBody, PendingBody

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

__all__ = [
    "APPROVE_RESPONSES",
    "CHAT_RESPONSES",
    "ERRORS",
    "MESSAGE_RESPONSES",
    "TURN_RESPONSES",
    "errors",
    "html_response",
    "json_response",
    "page_responses",
]


def json_response(description: str, model: Any) -> OpenAPIResponse:
    return cast(
        "OpenAPIResponse",
        {"description": description, "content": {"application/json": {"model": model}}},
    )


def html_response(description: str) -> OpenAPIResponse:
    return cast(
        "OpenAPIResponse",
        {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}},
    )


ERRORS: dict[int, OpenAPIResponse] = {
    400: json_response("Malformed JSON, bytes or base64, or invalid fields", ErrorBody),
    401: json_response("Missing or invalid API key", ErrorBody),
    403: json_response("Not allowed for this tenant or token", ErrorBody),
    404: json_response("Unknown agent, session or pending item", ErrorBody),
    409: json_response("Busy session, or already resolved (with the current state)", ErrorBody),
    410: json_response("The pending item or its link expired", ErrorBody),
    413: json_response("The body is larger than the documented limit", ErrorBody),
    415: json_response("A body of a media type the route does not take", ErrorBody),
    422: json_response("Changed arguments the tool does not take, naming the fields", ErrorBody),
}


def errors(*statuses: int) -> dict[int, OpenAPIResponse]:
    """The error responses ``statuses``, each ``{error, detail}``."""
    return {status: ERRORS[status] for status in statuses}


def page_responses(*statuses: int) -> dict[int, OpenAPIResponse]:
    """A page route's answers: HTML for success and for each error in ``statuses``."""
    pages = {status: html_response(ERRORS[status]["description"]) for status in statuses}
    return {200: html_response("The page"), **pages}


_TURN: dict[int, OpenAPIResponse] = {
    200: json_response("The turn finished", FinishedBody),
    202: json_response("The turn waits for a decision, an answer, or more time", PendingBody),
}
# POST /agents/{name}/messages: a body, a key, an agent, a session that may be busy.
MESSAGE_RESPONSES: dict[int, OpenAPIResponse] = {**_TURN, **errors(400, 401, 404, 409, 413, 415)}
# Deciding (approve, deny, answer): the item's tenant or a token for it, once, in time.
TURN_RESPONSES: dict[int, OpenAPIResponse] = {
    **_TURN,
    **errors(400, 401, 403, 404, 409, 410, 413, 415),
}
# Approving may change an editable tool's arguments: 422 when the tool refuses them.
APPROVE_RESPONSES: dict[int, OpenAPIResponse] = {**TURN_RESPONSES, **errors(422)}
# A chat's callback: verified first (401), then read (400); 404 when no channel takes it.
CHAT_RESPONSES: dict[int, OpenAPIResponse] = {
    200: cast(
        "OpenAPIResponse",
        {
            "description": "What the chat shows the person who clicked",
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
    ),
    **errors(400, 401, 404, 413, 415),
}
