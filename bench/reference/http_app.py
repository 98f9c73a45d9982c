"""The HTTP reference: the required stack behind one pydantic-validated route.

``APIGatewayHttpResolver(enable_validation=True)`` with a route whose body is a
pydantic model, as signoff's HTTP functions are built; the handler wrapped by the
Logger, Tracer and Metrics decorators they use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from _stack import logger, metrics, table_item, tracer
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.metrics import MetricUnit
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

app = APIGatewayHttpResolver(enable_validation=True)


class Message(BaseModel):
    message: str = Field(min_length=1, max_length=10_000)
    sessionId: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,128}$")


@app.post("/agents/<name>/messages")
def post_message(name: str, body: Message) -> dict[str, Any]:
    found = table_item(f"S#{body.sessionId or 'new'}")
    metrics.add_metric(name="Messages", unit=MetricUnit.Count, value=1)
    return {"agent": name, "known": bool(found)}


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> Any:
    return app.resolve(event, context)
