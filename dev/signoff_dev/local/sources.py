"""The functions' event sources on a laptop: the SQS pollers and the schedules.

Each ``SQS`` event of a template function gets a ``QueuePoller`` (Lambda's event
source mapping); each ``Schedule`` event without an ``Input`` (the sweeper's clock)
a ``Schedule`` at its rate, or at ``sweep_every``. A ``Schedule`` event with an
``Input`` is an agent's scheduled run: listed always, run only when asked to
(``signoff dev --schedules``), whether or not the deployed template enables it.
A source the template disables is not started.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from signoff.errors import ConfigError
from signoff_dev.local.poller import QueuePoller, Schedule, rate_seconds
from signoff_dev.local.template import REGION, TEMPLATE_FILE, Tag

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping

    from signoff_dev.local.functions import LocalFunction
    from signoff_dev.local.template import AwsResources

__all__ = ["EventSources", "triggering_queues"]


class EventSources:
    """The pollers and schedules of a stack's functions, started and stopped together."""

    def __init__(
        self,
        *,
        stack_name: str,
        log: Callable[[str], None],
        stop: threading.Event,
        sweep_every: float | None = None,
        schedules: bool = False,
        schedule_every: float | None = None,
    ) -> None:
        """``sweep_every`` and ``schedule_every`` override the template's rates (seconds)."""
        self._stack_name = stack_name
        self._log = log
        self._stop = stop
        self._sweep_every = sweep_every
        self._run_agent_schedules = schedules
        self._schedule_every = schedule_every
        self.pollers: list[QueuePoller] = []
        self.schedules: list[Schedule] = []
        # The agents' schedules (Schedule events with an Input), described for the banner.
        self.agent_schedules: list[str] = []

    def add(self, resources: AwsResources, functions: Mapping[str, LocalFunction]) -> None:
        """The sources of every function of ``resources`` (not started yet).

        Raises:
            ConfigError: a schedule's ``Input`` is not a JSON object, or a ``rate(...)``
                is malformed.
        """
        import boto3

        for spec in resources.functions.values():
            function = functions[spec.logical_id]
            for event_name, event in spec.events.items():
                props = event["Properties"]
                if event["Type"] in ("Schedule", "ScheduleV2") and "Input" in props:
                    self._agent_schedule(function, event_name)
                    continue
                if props.get("Enabled") is False or props.get("State") == "DISABLED":
                    continue
                if event["Type"] == "SQS":
                    poller = QueuePoller(
                        sqs=boto3.client("sqs", region_name=REGION),
                        queue_url=resources.queue_url_of(str(props["Queue"])),
                        queue_arn=str(props["Queue"]),
                        batch_size=int(props.get("BatchSize", 10)),
                        report_failures="ReportBatchItemFailures"
                        in props.get("FunctionResponseTypes", []),
                        invoke=function.invoke,
                        log=self._log,
                        stop=self._stop,
                    )
                    self.pollers.append(poller)
                elif event["Type"] in ("Schedule", "ScheduleV2"):
                    where = f"{spec.logical_id}.Events.{event_name}"
                    period = self._sweep_every or rate_seconds(props["Schedule"], where)
                    self._add_schedule(function, event_name, period)

    def start(self) -> None:
        for worker in self._workers():
            worker.start()

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for each source (set ``stop`` first)."""
        for worker in self._workers():
            worker.join(timeout=timeout)

    def _agent_schedule(self, function: LocalFunction, event_name: str) -> None:
        """List an agent's schedule, the function's ``event_name`` event; run it if asked to.

        Asked to (``schedules``), it runs whether or not the deployed template enables
        it (the sample's follows ``EnableSampleSchedules``, off by default): the function
        gets the ``Input`` as its event, as EventBridge delivers it.
        """
        where = f"{function.name}.Events.{event_name}"
        props = function.spec.events[event_name]["Properties"]
        expression = str(props.get("Schedule", ""))
        state, label = props.get("State"), f"{event_name} {expression}"
        if props.get("Enabled") is False or state == "DISABLED":
            label += " (disabled as deployed)"
        elif isinstance(state, Tag) and state.name == "If":  # a condition on the parameters
            label += f" (deployed if {state.value[0]})"
        if not self._run_agent_schedules:
            self.agent_schedules.append(label)
            return
        try:
            event = json.loads(str(props["Input"]))
        except ValueError:
            event = None
        if not isinstance(event, dict):
            raise ConfigError(TEMPLATE_FILE, f"{where}.Input", "is not a JSON object")
        period = self._schedule_every or (
            rate_seconds(expression, where) if expression.startswith("rate(") else 60.0
        )
        self.agent_schedules.append(f"{label}: runs every {period:g} s")
        self._add_schedule(function, event_name, period, input_event=event)

    def _add_schedule(
        self,
        function: LocalFunction,
        event_name: str,
        period: float,
        *,
        input_event: dict[str, Any] | None = None,
    ) -> None:
        """Invoke ``function`` every ``period`` seconds, as its ``event_name`` rule would."""
        self.schedules.append(
            Schedule(
                rule=f"{self._stack_name}-{function.name}{event_name}",
                period=period,
                invoke=function.invoke,
                log=self._log,
                stop=self._stop,
                input_event=input_event,
            )
        )

    def _workers(self) -> list[QueuePoller | Schedule]:
        return [*self.pollers, *self.schedules]


def triggering_queues(template: dict[str, Any]) -> set[str]:
    """Logical ids of the queues that an SQS event of a function names (``!GetAtt X.Arn``)."""
    found: set[str] = set()
    for resource in template.get("Resources", {}).values():
        for event in resource.get("Properties", {}).get("Events", {}).values():
            queue = event.get("Properties", {}).get("Queue") if event["Type"] == "SQS" else None
            if isinstance(queue, Tag) and queue.name == "GetAtt":
                target = queue.value if isinstance(queue.value, str) else ".".join(queue.value)
                found.add(str(target).split(".", 1)[0])
    return found
