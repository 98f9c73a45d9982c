"""``GET /openapi.json``, and which routes each function serves."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Router

from signoff.api import catalog, chat, decisions, inbox, links, messages
from signoff.api.app import openapi_document

__all__ = ["MESSAGE_ROUTERS", "RESOLVE_ROUTERS", "document", "router"]

router = Router()

# The message function runs turns; the resolve function decides and reads.
MESSAGE_ROUTERS = (messages.router,)
RESOLVE_ROUTERS = (
    decisions.router,
    links.router,
    catalog.router,
    chat.router,
    inbox.router,
    router,
)


@cache
def document() -> dict[str, Any]:
    """The OpenAPI document of the whole API (both functions' routes)."""
    return openapi_document(*MESSAGE_ROUTERS, *RESOLVE_ROUTERS[:-1])


@router.get("/openapi.json", summary="This API's OpenAPI document", tags=["meta"])
def openapi_json() -> dict[str, Any]:
    return document()
