"""``POST /agents/{name}/messages``: run one message, answer 200 done or 202 pending."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from signoff.api.context import api_of
from signoff.api.docs import MESSAGE_RESPONSES
from signoff.api.models import MessageBody
from signoff.api.shapes import turn_response
from signoff.telemetry import metrics_for_turn

__all__ = ["router"]

router = Router()


@router.post(
    "/agents/<name>/messages",
    summary="Send a message to an agent",
    description=(
        "Runs one turn. 200 when it finished, 202 when it waits for a decision or an "
        "answer (with the links to give it), or 202 `running` when it needs longer than "
        "the API allows (poll `statusUrl`)."
    ),
    responses=MESSAGE_RESPONSES,
    tags=["turns"],
)
def send_message(name: str, body: MessageBody) -> Response[dict[str, object]]:
    api = api_of(router)
    tenant = api.tenant(router.current_event.headers, name)
    agent = api.agents.get(name)
    result = api.turns.send(
        name,
        body.message,
        tenant=tenant,
        environment=api.environment,
        session_id=api.session_of(agent, body, tenant),
        deadline=api.deadline(router.lambda_context, interactive=True),
        channel="http",
    )
    metrics_for_turn("started", result)
    if result.status == "running":
        api.continuations.schedule(result.session_id)
    status, payload = turn_response(result)
    return Response(status_code=status, content_type="application/json", body=payload)
