"""OpenAPI response descriptions shared by the routes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from signoff.api.models import ErrorBody, FinishedBody, PendingBody

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

__all__ = ["ERRORS", "TURN_RESPONSES", "json_response"]


def json_response(description: str, model: type[Any]) -> OpenAPIResponse:
    return cast(
        "OpenAPIResponse",
        {"description": description, "content": {"application/json": {"model": model}}},
    )


ERRORS: dict[int, OpenAPIResponse] = {
    400: json_response("Malformed JSON or invalid fields", ErrorBody),
    401: json_response("Missing or invalid API key", ErrorBody),
    403: json_response("Not allowed for this tenant or token", ErrorBody),
    404: json_response("Unknown agent, session or pending item", ErrorBody),
    409: json_response("Busy session, or already resolved (with the current state)", ErrorBody),
    410: json_response("The pending item or its link expired", ErrorBody),
    413: json_response("The body is larger than the documented limit", ErrorBody),
}

TURN_RESPONSES: dict[int, OpenAPIResponse] = {
    200: json_response("The turn finished", FinishedBody),
    202: json_response("The turn waits for a decision, an answer, or more time", PendingBody),
    **ERRORS,
}
