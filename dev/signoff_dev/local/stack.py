"""``LocalStack``: the deployed system in one process on loopback, built from ``template.yaml``.

``start`` does, in order:

1. binds the HTTP port, on loopback only (``StackSettings`` refuses any other
   address; a port in use fails here, before anything else starts);
2. starts the AWS emulator (moto's server) and points this process at it:
   ``AWS_ENDPOINT_URL`` and credentials no real endpoint accepts;
3. creates every resource the template declares, with ``AllowAnonymous=true``
   (callers without a key are the ``default`` tenant), ``Environment`` from
   ``--env`` (else the template's default) and a short visibility timeout on the
   queues that trigger functions, so a failed notification is retried in seconds;
4. exports the functions' environment as the template resolves it, with the
   local differences: the repository's ``agents/``, the stack's own URL as
   ``SIGNOFF_PUBLIC_URL``, tracing and metrics off;
5. stores the channel secrets under the template's prefix (``signoff/<name>``),
   generating a ``whsec_`` key for the local webhook sink unless
   ``SIGNOFF_SECRET_<NAME>`` provides one, and verifies every email channel's
   sender with the emulator's SES (which, like SES, refuses mail from others):
   mail goes nowhere, the mailbox captures it;
6. serves Lambda's Invoke API for the functions' asynchronous invocations (a
   turn's continuation) and points boto3's Lambda endpoint at it
   (``signoff_dev.local.lambda_api``), then imports each function's ``app.py``
   as Lambda would: the composition root (``signoff.aws``) builds every service
   from that environment. Only the notifier's sink channels are aimed at this
   stack's port afterwards (``channels.yaml`` says 3000; the demo and tests use
   others);
7. serves the template's ``HttpApi`` routes and the local-only ones: the
   sink's, the mailbox's ``GET /_local/emails``, ``POST /_local/trigger`` (an
   agent's schedule run once: ``signoff trigger``), ``POST /_local/sweep`` (one
   sweep on a clock a test moves ahead: ``signoff_dev.local.sweep``), the SSE stream
   ``POST /agents/{name}/messages/stream`` and the ``/playground`` page, all
   behind ``signoff_dev.local.guard``, which refuses what a web page could send
   (another ``Host``, cross-site requests, non-JSON bodies); and starts the
   SQS pollers (one per function's SQS trigger: the notify queue into the
   notifier, the sweep queue into the sweep worker), the sweeper's schedule, the
   mailbox and — with ``schedules`` (``signoff dev --schedules``) — the agents'
   schedules.

Every function shares this process's environment, so the stack refuses a
template whose functions give one variable different values. ``stop`` undoes
all of it, the environment included.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, TextIO, cast

from signoff_dev.local.emulator import AwsEmulator
from signoff_dev.local.environ import EnvironmentChanges
from signoff_dev.local.functions import FunctionOutput, LocalFunction
from signoff_dev.local.gateway import Gateway
from signoff_dev.local.guard import RequestGuard, check_listen_address
from signoff_dev.local.lambda_api import LambdaInvokeApi
from signoff_dev.local.longpoll import waiting_invoke
from signoff_dev.local.mailbox import Mailbox, emulator_sent_messages
from signoff_dev.local.router import Route, RouteTable, routes_from
from signoff_dev.local.sink import NotificationSink
from signoff_dev.local.sources import EventSources, triggering_queues
from signoff_dev.local.sweep import sweep_routes
from signoff_dev.local.template import (
    ACCOUNT_ID,
    REGION,
    AwsResources,
    create_resources,
    find_template,
    load_template,
)
from signoff_dev.local.trigger import scheduled_function, trigger_routes
from signoff_dev.local.wiring import (
    aim_sinks,
    capture_emails,
    check_continuing_function,
    export_environment,
    message_api,
    store_channel_secrets,
)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from types import FrameType

    from signoff.api.context import Api
    from signoff.channels.config import ChannelsConfig
    from signoff_dev.local.poller import QueuePoller, Schedule

__all__ = ["STACK_NAME", "LocalStack", "StackSettings"]

STACK_NAME: Final = "signoff"
_FAKE_CREDENTIALS: Final = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_SESSION_TOKEN": "local",
}


@dataclass(frozen=True, kw_only=True)
class StackSettings:
    """How to run the stack; every field has the ``signoff dev`` default."""

    port: int = 3000  # 0: any free port
    host: str = "127.0.0.1"  # loopback only: see signoff_dev.local.guard
    environment: str | None = None  # None: the template's Environment default
    # Template parameters, as `sam deploy --parameter-overrides` gives them (e.g.
    # MaxConcurrentRuns); AllowAnonymous is always "true" here.
    parameters: Mapping[str, str] = field(default_factory=dict)
    sweep_every: float | None = None  # None: the template's schedule
    # Run the agents' schedules (Schedule events with an Input), enabled deployed or not.
    schedules: bool = False
    # Seconds between an agent schedule's runs; None: a rate(...) at its rate and a
    # cron(...) every 60 s (cron expressions are not evaluated locally).
    schedule_every: float | None = None
    template: Path | None = None  # None: find_template()
    agents: Path | None = None  # None: agents/ beside the template
    # Seconds, for the queues that trigger a function: a failed notification comes
    # back this soon. The template's 6x-the-timeout rule guards against a second
    # consumer taking a batch still being handled; here one poller thread per
    # queue waits for its invocation before it receives again.
    visibility_timeout: int = 5
    log_level: str = "WARNING"  # the functions' Powertools logger
    # False: no SSE route, as a deployed HTTP API without the stream function (the
    # playground and signoff.client then fall back to long-poll).
    stream: bool = True
    console: TextIO | None = None  # where the stack reports; None: stdout
    logs: TextIO | None = None  # where the functions' own output goes; None: stderr

    def __post_init__(self) -> None:
        """Raises: UsageError: ``host`` is not loopback (see ``check_listen_address``)."""
        check_listen_address(self.host)


class LocalStack:
    """The functions of ``template.yaml`` behind an HTTP server, on an emulated AWS."""

    def __init__(self, settings: StackSettings | None = None) -> None:
        self.settings = settings or StackSettings()
        self.template_path = self.settings.template or find_template()
        self.root = self.template_path.parent
        self.agents_dir = self.settings.agents or self.root / "agents"
        self.resources = AwsResources(stack_name=STACK_NAME)
        self._stopping = threading.Event()
        self.functions: dict[str, LocalFunction] = {}
        self.routes: list[Route] = []
        self.sink = NotificationSink([], printer=self.say)
        self.mailbox = Mailbox(
            sent=emulator_sent_messages(ACCOUNT_ID, REGION), printer=self.say, stop=self._stopping
        )
        self.sources = EventSources(
            stack_name=STACK_NAME,
            log=self.say,
            stop=self._stopping,
            sweep_every=self.settings.sweep_every,
            schedules=self.settings.schedules,
            schedule_every=self.settings.schedule_every,
        )
        self._console = self.settings.console or sys.stdout
        self._say_lock = threading.Lock()
        self._emulator = AwsEmulator()
        self._environ = EnvironmentChanges()
        self._lambda: LambdaInvokeApi | None = None
        self._gateway: Gateway | None = None
        self._output: FunctionOutput | None = None

    # -- reporting -------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """One message on the stack's console."""
        with self._say_lock:
            print(text, file=self._console, flush=True)

    @property
    def url(self) -> str:
        """The HTTP API's base URL, e.g. ``http://127.0.0.1:3000``."""
        port = self._gateway.port if self._gateway else self.settings.port
        return f"http://{self.settings.host}:{port}"

    @property
    def environment(self) -> str:
        """The environment segment of every rule scope (the template's Environment)."""
        return self.resources.environment.get("SIGNOFF_ENVIRONMENT", "")

    @property
    def pollers(self) -> list[QueuePoller]:
        """The SQS pollers, one per queue that triggers a function."""
        return self.sources.pollers

    @property
    def schedules(self) -> list[Schedule]:
        """The schedules that run: the sweeper's, and the agents' when asked to."""
        return self.sources.schedules

    @property
    def agent_schedules(self) -> list[str]:
        """The agents' schedules (Schedule events with an Input), described for the banner."""
        return self.sources.agent_schedules

    @property
    def aws_endpoint(self) -> str:
        """The emulator's endpoint (``AWS_ENDPOINT_URL``)."""
        return self._emulator.endpoint

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> LocalStack:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def start(self) -> None:
        """Bring everything up (see the module's docstring); ``stop`` undoes a partial start.

        Raises:
            UsageError: the port is in use, a parameter value is not allowed, or moto's
                server is not installed.
            ConfigError: the template, ``channels.yaml`` or a function is invalid.
        """
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        self._gateway = Gateway(self.settings.host, self.settings.port, log=self.say)
        self._output = FunctionOutput(sys.stdout, self.settings.logs or sys.stderr)
        sys.stdout = cast("TextIO", self._output)
        self._lambda = LambdaInvokeApi({}, report=self.say, host=self.settings.host)
        self._emulator.start()
        for name in [n for n in os.environ if n.startswith("AWS_ENDPOINT_URL_")]:
            self._environ.set(name, None)  # a per-service endpoint would bypass the emulator
        for name, value in {
            **_FAKE_CREDENTIALS,
            "AWS_ENDPOINT_URL": self.aws_endpoint,
            # Lambda calls (a turn's continuation) go to the stack's own Invoke API.
            "AWS_ENDPOINT_URL_LAMBDA": self._lambda.endpoint,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "AWS_PROFILE": None,
            "AWS_SECURITY_TOKEN": None,
        }.items():
            self._environ.set(name, value)
        template = load_template(self.template_path)
        parameters = {**self.settings.parameters, "AllowAnonymous": "true"}
        if self.settings.environment is not None:
            parameters["Environment"] = self.settings.environment
        self.resources = create_resources(
            template,
            stack_name=STACK_NAME,
            parameters=parameters,
            properties={
                queue: {"VisibilityTimeout": self.settings.visibility_timeout}
                for queue in triggering_queues(template)
            },
        )
        self._export_environment()
        channels = self._channel_secrets()
        check_continuing_function(self.resources.functions.values())
        for spec in self.resources.functions.values():
            function = LocalFunction(spec, self.root)
            function.load()
            self.functions[spec.logical_id] = function
        self._lambda.functions = {f.spec.physical_name: f for f in self.functions.values()}
        self._lambda.start()
        aim_sinks(self.functions.values(), channels, url=self.url)
        self.routes = routes_from(self.resources.functions)
        self._gateway.routes = RouteTable(self.routes)
        self._gateway.local = {
            **self.sink.routes(),
            **self.mailbox.routes(),
            **trigger_routes(scheduled_function(self.functions)),
            **sweep_routes(),
        }
        self._serve_stream_and_playground(self._gateway)
        self._gateway.guard = RequestGuard(self._gateway.port, self._served(self._gateway))
        # One HTTP request in a function at a time, process-wide (see signoff_dev.local.functions).
        requests = threading.Lock()
        self._gateway.invoke = lambda route, event: waiting_invoke(
            route,
            event,
            lambda event: self.functions[route.function].invoke(event, serial=requests),
            self.message_api,
        )
        self._gateway.start()
        self.sources.add(self.resources, self.functions)
        self.sources.start()
        self.mailbox.start()
        # What starting made (modules, boto3's models, the agents) lives as long as the
        # stack: out of the collector's full passes, which otherwise walk it all and hold
        # every thread meanwhile (a few hundred ms each, many a minute under a turn).
        gc.freeze()

    def stop(self) -> None:
        """Stop serving, wait for running continuations, reset the emulator, restore the env."""
        self._stopping.set()
        if self._gateway is not None:
            self._gateway.stop()
        self.sources.join(timeout=5.0)
        self.mailbox.join(timeout=5.0)
        if self._lambda is not None:
            self._lambda.stop(timeout=15.0)
        self._emulator.stop()
        for function in self.functions.values():
            function.unload()
        self._environ.restore()
        if self._output is not None and sys.stdout is cast("TextIO", self._output):
            sys.stdout = self._output.console

    def serve_forever(self) -> None:
        """Run until Ctrl-C (SIGINT) or SIGTERM, then stop cleanly. Main thread only."""
        interrupted = threading.Event()

        def on_signal(number: int, _: FrameType | None) -> None:
            interrupted.set()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            while not interrupted.wait(0.5):
                pass
            self.say("stopping the local stack…")
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.stop()
        self.say("stopped")

    # -- wiring ----------------------------------------------------------------------------

    def _export_environment(self) -> None:
        local = {
            "SIGNOFF_AGENTS_DIR": str(self.agents_dir),
            "SIGNOFF_PUBLIC_URL": self.url,
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": self.settings.log_level,
        }
        export_environment(self.resources.functions.values(), local, self._environ)

    def _channel_secrets(self) -> ChannelsConfig:
        """Store the channels' secrets under the template's prefix; key the sink; capture mail."""
        from signoff.channels.http_notifier import deployment_channels

        config = deployment_channels(self.agents_dir)
        keys = store_channel_secrets(
            config,
            url=self.url,
            prefix=os.environ.get("SIGNOFF_CHANNEL_SECRETS_PREFIX", f"{STACK_NAME}/"),
            environ=self._environ,
            say=self.say,
        )
        self.sink = NotificationSink(keys, printer=self.say)
        capture_emails(config)
        return config

    def _serve_stream_and_playground(self, gateway: Gateway) -> None:
        """The SSE route and the playground: local-only, beside the template's routes."""
        from signoff_dev.local.playground import playground_routes
        from signoff_dev.local.stream import TurnStream

        stream = TurnStream(self.message_api, stopping=self._stopping, log=self.say)
        gateway.local_patterns = [(stream.route, stream.serve)] if self.settings.stream else []
        gateway.local.update(playground_routes(self.root / "examples"))

    def _served(self, gateway: Gateway) -> RouteTable:
        """Every route ``gateway`` serves, the template's and its local-only ones, for the guard."""
        local = [
            Route(function="local", method=method, path=path) for method, path in gateway.local
        ]
        return RouteTable([*self.routes, *local, *(route for route, _ in gateway.local_patterns)])

    def message_api(self) -> Api:
        """The services of the function that serves ``POST /agents/{name}/messages``."""
        return message_api(self.routes, self.functions)
