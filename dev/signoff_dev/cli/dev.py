"""``signoff dev``, ``demo``, ``trigger``: the whole system on this machine, from the template.

``dev`` runs the local stack (``signoff_dev.local``) until Ctrl-C: the functions
behind an HTTP server routed from the template, AWS emulated by moto on
loopback, the queues' pollers (the notifier's, the sweep workers'), the
sweeper's schedule, a webhook sink that prints each notification with its links
and a mailbox that prints each email the emulator's SES accepted. With
``--schedules`` the agents' schedules run too (a ``rate(...)`` at its rate, a
``cron(...)`` every ``--schedule-every`` seconds, 60 by default: cron
expressions are not evaluated locally), each run invoking the message function
with the schedule's ``Input``, as EventBridge would; without it they run only
on request. ``demo`` starts the same stack on a free port, walks one approval
through it over HTTP and stops it.
``trigger <agent>`` runs an agent's schedule once against a running stack
(``POST /_local/trigger``: the message function gets the event EventBridge
would send) and prints the result and the turn's text.

Exit codes: 0 done (``dev``: stopped by Ctrl-C), 1 a failure (``demo``: a step
that did not go as expected; ``trigger``: no stack answering, or the run
failed), 2 a usage error (a port already in use; an unknown agent, or one with
no schedule and no ``--message``).
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from signoff.errors import SignoffError, UsageError

if TYPE_CHECKING:
    import argparse

    from signoff_dev.local.stack import LocalStack

__all__ = ["register"]

EXIT_OK, EXIT_INTERRUPTED = 0, 130
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``dev``, ``demo`` and ``trigger`` commands to the ``signoff`` parser."""
    dev = commands.add_parser(
        "dev", help="run the whole system locally (API, AWS emulator, notifier, sweeper)"
    )
    dev.add_argument("--port", type=int, default=3000, help="HTTP port (default 3000)")
    dev.add_argument(
        "--env",
        dest="environment",
        default=None,
        help="the template's Environment parameter (default: its default, production)",
    )
    dev.add_argument(
        "--sweep-every",
        type=float,
        default=None,
        metavar="SECONDS",
        help="run the sweeper this often (default: the template's schedule)",
    )
    dev.add_argument(
        "--schedules",
        action="store_true",
        help="run the agents' schedules (default: only on request, with `signoff trigger`)",
    )
    dev.add_argument(
        "--schedule-every",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --schedules, run each agent schedule this often (default: a rate(...) "
        "at its rate, a cron(...) every 60 s)",
    )
    dev.add_argument(
        "--log-level",
        default="WARNING",
        choices=_LOG_LEVELS,
        help="the functions' log level (their logs go to stderr; default WARNING)",
    )
    dev.set_defaults(command=_dev)

    demo = commands.add_parser(
        "demo", help="walk one approval end to end through a local stack, then stop it"
    )
    mode = demo.add_mutually_exclusive_group()
    mode.add_argument(
        "--deny", action="store_const", const="deny", dest="mode", help="deny the refund"
    )
    mode.add_argument(
        "--question",
        action="store_const",
        const="question",
        dest="mode",
        help="answer the agent's question on the link page, then approve",
    )
    demo.add_argument("--port", type=int, default=0, help="HTTP port (default: a free one)")
    demo.set_defaults(command=_demo, mode="approve")

    trigger = commands.add_parser(
        "trigger", help="run an agent's schedule once against a running local stack"
    )
    trigger.add_argument("agent", help="the agent whose schedule to run")
    trigger.add_argument("--message", help="the message to send (default: the schedule's)")
    trigger.add_argument("--tenant", help="the tenant to run as (default: the schedule's)")
    trigger.add_argument(
        "--port", type=int, default=3000, help="the local stack's HTTP port (default 3000)"
    )
    trigger.set_defaults(command=_trigger)


def _dev(args: argparse.Namespace) -> int:
    from signoff_dev.local.stack import LocalStack, StackSettings

    stack = LocalStack(
        StackSettings(
            port=args.port,
            environment=args.environment,
            sweep_every=args.sweep_every,
            schedules=args.schedules,
            schedule_every=args.schedule_every,
            agents=args.agents,
            log_level=args.log_level,
        )
    )
    try:
        stack.start()
    except KeyboardInterrupt:  # Ctrl-C while starting: start() has cleaned up
        return EXIT_INTERRUPTED
    stack.say(_banner(stack))
    stack.serve_forever()
    return EXIT_OK


def _banner(stack: LocalStack) -> str:
    """What runs where: the URL, the agents, where notifications and emails appear, schedules."""
    from signoff.agents import AgentCatalog
    from signoff_dev.local.demo import AGENT, MESSAGES
    from signoff_dev.local.mailbox import EMAILS_PATH
    from signoff_dev.local.playground import agent_status
    from signoff_dev.local.sink import LIST_PATH, SINK_PATH

    names = AgentCatalog(stack.agents_dir).names()
    # Each agent loaded now, as `signoff check` loads it, not at its first request: a
    # broken one is named with its file and line; the others serve, a rule that may
    # be a typo named as a warning.
    problems, warnings = agent_status(stack.agents_dir)
    broken = [f"  misconfigured  {name}: {problem}" for name, problem in problems.items()]
    broken += [f"  warning  {name}: {w}" for name, found in warnings.items() for w in found]
    functions = ", ".join(sorted({route.function for route in stack.routes}))
    schedules = ", ".join(
        f"{s.rule} every {s.period:g} s" for s in stack.schedules if s.input_event is None
    )
    if stack.settings.schedules:
        runs = "on (--schedules): the message function gets each one's Input as its event"
    else:
        runs = "off: `signoff trigger <agent>` runs one; `signoff dev --schedules` runs them"
    queues = ", ".join(p.queue_url.rsplit("/", 1)[-1] for p in stack.pollers)
    agent = AGENT if AGENT in names else (names or ["<agent>"])[0]
    return "\n".join(
        [
            f"signoff local stack: {stack.template_path}, environment {stack.environment}",
            f"  API            {stack.url}  ({len(stack.routes)} routes → {functions})",
            f"  agents         {', '.join(names) or 'none'}  ({stack.agents_dir})",
            *broken,
            f"  playground     {stack.url}/playground  (live events over the SSE stream, "
            f"POST {stack.url}/agents/<name>/messages/stream)",
            f"  agent config   {stack.url}/agents/config  (every agent's prompt, tools, rules, "
            "channels and hooks)",
            f"  notifications  printed here as they arrive at {stack.url}{SINK_PATH};",
            f"                 GET {stack.url}{LIST_PATH} lists them",
            "  emails         printed here as the emulator's SES accepts them;",
            f"                 GET {stack.url}{EMAILS_PATH} lists them",
            f"  queue poller   {queues or 'none'}",
            f"  schedules      {schedules or 'none'}",
            f"  agent runs     {', '.join(stack.agent_schedules) or 'none'}",
            f"                 schedules {runs}",
            f"  AWS emulator   {stack.aws_endpoint}  (moto); for boto3, `signoff keys`, "
            "`signoff inbox` (--link too) and `signoff audit`:",
            f"                 export AWS_ENDPOINT_URL={stack.aws_endpoint} "
            "AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_DEFAULT_REGION=us-east-1 "
            f"{_exported(stack)}",
            "",
            "Try:",
            f"  curl -s -X POST {stack.url}/agents/{agent}/messages \\",
            "       -H 'content-type: application/json' \\",
            f'       -d \'{{"message": "{MESSAGES["approve"]}"}}\'',
            "Ctrl-C stops the stack.",
        ]
    )


# What the operator commands read besides the AWS variables: the table, and for an
# inbox link the API's address and the signing secret (as the functions see them).
_EXPORTED = ("SIGNOFF_TABLE", "SIGNOFF_PUBLIC_URL", "SIGNOFF_RESUME_SIGNING_SECRET_ARN")


def _exported(stack: LocalStack) -> str:
    values = {**stack.resources.environment, "SIGNOFF_PUBLIC_URL": stack.url}
    return " ".join(f"{name}={values.get(name, '')}" for name in _EXPORTED)


def _demo(args: argparse.Namespace) -> int:
    from signoff_dev.local.demo import Demo
    from signoff_dev.local.stack import LocalStack, StackSettings

    # The stack's console (requests, notifications) and the functions' logs are
    # kept aside: the demo narrates, and they are shown only if a step fails.
    behind = io.StringIO()
    stack = LocalStack(
        StackSettings(port=args.port, agents=args.agents, console=behind, logs=behind)
    )
    stack.start()
    demo = Demo(stack.url, say=lambda text: print(text, flush=True))
    try:
        print(f"signoff demo: a local stack on {stack.url}, AWS emulated at {stack.aws_endpoint}")
        finished = demo.run(args.mode)
    except SignoffError:
        print(f"what the stack logged:\n{behind.getvalue()}", file=sys.stderr)
        raise
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        demo.close()
        stack.stop()
    print(f"The demo finished: the turn is {finished['status']}; the stack is stopped.")
    return EXIT_OK


def _trigger(args: argparse.Namespace) -> int:
    """Send the agent's scheduled-run event through the stack's ``POST /_local/trigger``.

    Raises:
        UnknownAgent: no such agent under the agents folder.
        UsageError: the agent has no schedule and no ``--message`` was given.
        SignoffError: no stack answers on the port, or the run failed.
    """
    from signoff.agents import AgentCatalog
    from signoff_dev.local.trigger import run_trigger

    root = args.agents or Path(os.environ.get("SIGNOFF_AGENTS_DIR", "agents"))
    config = AgentCatalog(root).get(args.agent).config
    schedule = config.schedule
    if schedule is None and args.message is None:
        raise UsageError(
            f"agent {args.agent!r} has no schedule in its agent.yaml: give --message to run it"
        )
    message = args.message if args.message is not None else ""
    tenant = args.tenant or "default"
    if schedule is not None:
        message = message or schedule.message
        tenant = args.tenant or schedule.tenant
    event = {"agent": args.agent, "message": message, "tenant": tenant}
    result, text = run_trigger(f"http://127.0.0.1:{args.port}", args.agent, event)
    print(json.dumps(result))
    if text:
        print(f"text: {text}")
    return EXIT_OK
