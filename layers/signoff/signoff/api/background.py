"""The message function's non-HTTP work: scheduled runs and continuations of long turns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.api.app import serve
from signoff.api.models import ScheduledRun
from signoff.continuations.base import continuation_session
from signoff.durable.results import Skipped
from signoff.telemetry import logger, metrics_for_turn

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    from signoff.api.context import Api
    from signoff.durable.results import TurnResult

__all__ = ["dispatch"]


def dispatch(app: APIGatewayHttpResolver, api: Api, event: dict[str, Any], context: Any) -> Any:
    """Route an invocation: a continuation, a scheduled run, or an HTTP request."""
    session_id = continuation_session(event)
    if session_id is not None:
        result = api.turns.proceed(session_id, deadline=api.deadline(context, interactive=False))
        if isinstance(result, Skipped):
            # Logged by ``proceed``; an answer, not an error, so Lambda does not retry it.
            logger.append_keys(session_id=result.session_id, agent=result.agent)
            return {
                "sessionId": result.session_id,
                "status": "skipped",
                "sessionStatus": result.session_status,
            }
        return _background(api, "resumed", result)
    if "requestContext" not in event and "agent" in event:
        run = ScheduledRun.model_validate(event)
        result = api.turns.send(
            run.agent,
            run.message,
            tenant=run.tenant,
            environment=api.environment,
            deadline=api.deadline(context, interactive=False),
            channel="schedule",
        )
        return _background(api, "started", result)
    return serve(app, api, event, context)


def _background(api: Api, trigger: str, result: TurnResult) -> dict[str, Any]:
    metrics_for_turn(trigger, result)
    if result.status == "running":
        api.continuations.schedule(result.session_id)
    logger.info(
        "background turn", extra={"status": result.status, "stop_reason": result.stop_reason}
    )
    return {"sessionId": result.session_id, "status": result.status}
