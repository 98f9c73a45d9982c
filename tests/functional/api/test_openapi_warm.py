"""Serving the OpenAPI document leaves a warm resolve function's routes working."""

from __future__ import annotations

from signoff.api import catalog, decisions, links, spec
from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas


def test_routes_answer_after_the_document_was_served_on_the_same_function(
    lambdas: Lambdas,
) -> None:
    # Given a warm resolve function whose first request builds the OpenAPI document
    spec.document.cache_clear()
    served = lambdas.invoke("resolve", load_event("openapi_get"))
    assert served["statusCode"] == 200
    # its routers still belong to the function's own resolver, not the document's
    for router in (decisions.router, links.router, catalog.router):
        assert router.api_resolver is lambdas.resolve.app
    # When a paused refund is then approved and read on that same function
    paused = body(lambdas.invoke("message", load_event("message_post")))
    done = lambdas.invoke("resolve", load_event("approval_approve", PENDING_ID=paused["id"]))
    status = lambdas.invoke("resolve", load_event("session_status", SESSION_ID=paused["sessionId"]))
    # Then both routes answer as they would on a fresh function
    assert done["statusCode"] == 200, done["body"]
    assert body(status)["status"] == "done"
