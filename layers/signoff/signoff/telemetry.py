"""Logs, metrics and correlation keys of the functions (Powertools): the AWS side, not the core."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

if TYPE_CHECKING:
    from signoff.durable.results import TurnResult

__all__ = ["TRACED_MODULES", "logger", "metrics", "metrics_for_turn", "resolve_latency"]

logger = Logger(service="signoff")
metrics = Metrics(namespace="signoff", service="signoff")
# What the functions' Tracer patches: the libraries they call out with (AWS APIs;
# model providers and channels). The default, every library X-Ray supports,
# imports sqlite3, SQLAlchemy's, pymongo's … patch modules on each cold start.
TRACED_MODULES = ("botocore", "httpx")

_OUTCOME = {"finished": "TurnsFinished", "paused": "TurnsPaused", "running": "TurnsContinued"}


def metrics_for_turn(trigger: str, result: TurnResult) -> None:
    """Count what happened to a turn and tag the log with its ids."""
    logger.append_keys(session_id=result.session_id, agent=result.agent)
    if result.pending is not None:
        logger.append_keys(pending_id=result.pending.id, run_id=result.pending.run_id)
    metrics.add_metric(
        name="TurnsStarted" if trigger == "started" else "TurnsResumed",
        unit=MetricUnit.Count,
        value=1,
    )
    metrics.add_metric(name=_OUTCOME[result.status], unit=MetricUnit.Count, value=1)


def resolve_latency(started: float) -> None:
    """How long a resolution took, from the request to the resumed turn's outcome."""
    metrics.add_metric(
        name="ResolveLatency",
        unit=MetricUnit.Milliseconds,
        value=(time.perf_counter() - started) * 1000,
    )
