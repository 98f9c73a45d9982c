"""Logs, metrics and correlation keys of the functions (Powertools): the AWS side, not the core.

One structured log. The Powertools logger is the stdlib logger ``signoff``, so
the engine's own ``logging.getLogger(__name__)`` loggers (``signoff.*``) write
through it: the same JSON with the same correlation keys. The libraries the
functions call out with get its handler too, at WARNING (``quiet_libraries``).
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers
from aws_lambda_powertools.metrics import MetricUnit

if TYPE_CHECKING:
    from signoff.durable.results import TurnResult

__all__ = [
    "LIBRARIES",
    "TRACED_MODULES",
    "logger",
    "metrics",
    "metrics_for_turn",
    "notification_failed",
    "notifications_sent",
    "quiet_libraries",
    "resolve_latency",
]

# The service name is the package's name: ``signoff.*`` loggers are its children.
logger = Logger(service="signoff")
metrics = Metrics(namespace="signoff", service="signoff")
# What the functions' Tracer patches: the libraries they call out with (AWS APIs;
# model providers and channels). The default, every library X-Ray supports,
# imports sqlite3, SQLAlchemy's, pymongo's … patch modules on each cold start.
TRACED_MODULES = ("botocore", "httpx")

# Libraries that log on their own. Below WARNING they write what must not reach a
# log: httpx's INFO line names every URL it posts to (a Slack or Lark webhook URL
# is itself a secret), botocore's DEBUG the requests' bodies (tool arguments in
# the session log). Lambda sets the root logger to INFO, so they are capped here.
LIBRARIES = ("botocore", "boto3", "urllib3", "httpx", "httpcore", "aws_xray_sdk")
# Python's warnings go to stderr as plain text, one more line in a JSON log stream;
# captured, they are records of this logger and written as the service's JSON.
WARNINGS_LOGGER = "py.warnings"


def quiet_libraries() -> None:
    """The libraries' loggers write the service's JSON (correlation keys too), WARNING and up.

    Python warnings too. Powertools' "No application metrics to publish" is not one:
    a read route or an idle sweep records no metric by design, so it is dropped.
    """
    warnings.filterwarnings(
        "ignore", message="No application metrics to publish", category=UserWarning
    )
    logging.captureWarnings(True)
    for name in (*LIBRARIES, WARNINGS_LOGGER):
        logging.getLogger(name)  # registered now, whether the library is imported yet or not
    copy_config_to_registered_loggers(
        source_logger=logger, log_level=logging.WARNING, include={*LIBRARIES, WARNINGS_LOGGER}
    )


# At import: once per cold start, before a handler runs.
quiet_libraries()

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


# The notifier reports failures from its send threads; Powertools' metric set is a
# plain dict, so additions from several threads take turns.
_METRICS_LOCK = threading.Lock()


def notification_failed(
    channel: str, subject: str, reason: str, *, retry_at: float | None = None
) -> None:
    """A channel's row failed permanently: one log line with the reason, one count.

    Called as it happens (the notifier's ``on_permanent_failure``), so it is counted
    also when another channel of the same notification failed transiently. Every
    permanent failure counts, the first included: it is mostly configuration, and
    fixed before the slow retry at ``retry_at`` it heals without a re-drive. No
    ``retry_at``: the row is failed for good (``signoff outbox retry`` re-drives it).
    """
    if retry_at is None:
        message, extra = "notification failed for good", {}
    else:
        message, extra = "notification failed, retry scheduled", {"retry_at": retry_at}
    logger.warning(
        message, extra={"channel": channel, "subject": subject, "reason": reason, **extra}
    )
    with _METRICS_LOCK:
        metrics.add_metric(name="NotificationsFailed", unit=MetricUnit.Count, value=1)


def notifications_sent(count: int) -> None:
    """``count`` channels of one notification delivered."""
    with _METRICS_LOCK:
        metrics.add_metric(name="NotificationsSent", unit=MetricUnit.Count, value=count)
