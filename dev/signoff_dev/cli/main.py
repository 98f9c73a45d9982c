"""``signoff run | send | agents | new | check | config | keys | outbox | template | rules |
migrate``: agent turns in the terminal (``send``: on a running stack), a new agent folder, the
agents' check before a build, API keys, the outbox's failed notifications, the template's agent
schedules, a rules change replayed over recorded history (``rules replay``), and a previous
release's items moved to this release's index keys (``migrate``).

Options go before or after the command (``signoff --agents DIR run …`` and
``signoff run … --agents DIR`` are the same); the human output is coloured on a
terminal only (``NO_COLOR`` turns it off), never on a pipe.

Exit codes: 0 the turn finished, 1 an error, 2 a usage error (bad arguments,
an unknown agent, an approval that no terminal or flag can answer).

With ``--json`` a turn is the protocol's NDJSON stream: ``session`` first, then
exactly one terminal line — ``done`` when the turn finished, or ``error`` when it
failed after ``session`` (a model that fails, an ask no flag answers), as the SSE
stream ends; the exit code then says which failure it was. A run refused before
the turn starts (unknown agent, bad configuration) prints no event, as the
stream answers such a request with an error instead of a stream.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from signoff.errors import ConfigError, SignoffError, UnknownAgent, UsageError
from signoff.events import ErrorEvent
from signoff.ids import new_id
from signoff.messages import Message
from signoff_dev.cli import check, dev, inbox, keys, migrate, new, outbox, rules, send, template
from signoff_dev.cli.options import (
    AGENTS_HELP,
    add_agents_option,
    add_decision_options,
    flag_decision,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from signoff.engine.live import LiveApprover

__all__ = ["main"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
_HISTORY = TypeAdapter(list[Message])
_SESSION_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.command(args)
        return result
    except UnknownAgent as exc:
        print(f"signoff: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except UsageError as exc:
        print(f"signoff: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as exc:
        print(f"signoff: invalid configuration: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except SignoffError as exc:
        print(f"signoff: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="signoff", description="Agent turns that pause for a human sign-off."
    )
    parser.add_argument("--version", action="version", version=f"signoff {_version()}")
    parser.add_argument(
        "--agents",
        type=Path,
        default=None,
        help=AGENTS_HELP,
    )
    commands = parser.add_subparsers(required=True, metavar="command")

    run = commands.add_parser("run", help="run one turn of an agent")
    run.add_argument("agent", help="the agent's folder name (`signoff agents` lists them)")
    run.add_argument("message", help="the user's message that starts the turn")
    run.add_argument("--json", action="store_true", help="NDJSON events on stdout")
    run.add_argument("--session", help="continue this session (default: a new one)")
    run.add_argument(
        "--tenant", default="default", help="the tenant the rules see (default: default)"
    )
    run.add_argument(
        "--env",
        default="production",
        dest="environment",
        help="the environment the rules see (default: production)",
    )
    add_decision_options(run)
    run.set_defaults(command=_run)

    agents = commands.add_parser("agents", help="list the agents")
    agents.set_defaults(command=_agents)

    new.register(commands)
    check.register(commands)

    schema = commands.add_parser("schema", help="print the LoopEvent JSON Schema")
    schema.set_defaults(command=_schema)

    openapi = commands.add_parser("openapi", help="print the HTTP API's OpenAPI document")
    openapi.set_defaults(command=_openapi)

    config = commands.add_parser("config", help="print an agent's resolved config (no secrets)")
    config.add_argument("agent", help="the agent's folder name")
    config.set_defaults(command=_config)

    send.register(commands)
    keys.register(commands)
    inbox.register(commands)
    rules.register(commands)
    outbox.register(commands)
    migrate.register(commands)
    template.register(commands)
    dev.register(commands)
    for name in _USE_AGENTS:
        add_agents_option(commands.choices[name])
    return parser


# The commands that read the agents folder, so take --agents after their name too.
_USE_AGENTS = ("run", "agents", "config", "dev", "demo", "trigger", "migrate")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("signoff")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _catalog(args: argparse.Namespace) -> Any:
    from signoff.agents import AgentCatalog

    root = args.agents or Path(os.environ.get("SIGNOFF_AGENTS_DIR", "agents"))
    return AgentCatalog(root)


def _agents(args: argparse.Namespace) -> int:
    catalog = _catalog(args)
    names = catalog.names()
    if not names:
        print(f"signoff: no agents under {catalog.root}", file=sys.stderr)
        return EXIT_ERROR
    for name in names:
        print(f"{name}\t{catalog.get(name).config.description}")
    return EXIT_OK


def _schema(_: argparse.Namespace) -> int:
    from signoff.events import loop_event_schema

    print(json.dumps(loop_event_schema(), indent=2))
    return EXIT_OK


def _openapi(_: argparse.Namespace) -> int:
    from signoff.api.spec import document

    print(json.dumps(document(), indent=2))
    return EXIT_OK


def _config(args: argparse.Namespace) -> int:
    from signoff.agents.describe import describe_agent

    print(json.dumps(describe_agent(_catalog(args).get(args.agent)), indent=2, ensure_ascii=False))
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from signoff.clock import SystemClock
    from signoff.engine import Engine
    from signoff.engine.live import run_live
    from signoff.models.factory import build_model
    from signoff_dev.cli.approvers import FlagApprover, TerminalApprover
    from signoff_dev.cli.printer import event_printer

    decision = flag_decision(args)
    agent = _catalog(args).get(args.agent)
    session_id = args.session or new_id()
    if not _SESSION_ID.match(session_id):
        raise UsageError(f"--session {session_id!r}: use letters, digits, '.', '_' or '-'")
    store = _SessionFile(session_id)
    history = store.load()

    sink = event_printer(args.json)
    approver: LiveApprover
    interactive = decision is None and args.answer is None and sys.stdin.isatty()
    if interactive:
        summaries = {name: tool.summary for name, tool in agent.tools.items()}
        approver = TerminalApprover(sys.stdin, sys.stderr, summaries)
    else:
        approver = FlagApprover(decision, args.answer, args.reason or "")
    engine = Engine(
        agent=agent,
        model=build_model(agent.config.model, agent.directory),
        clock=SystemClock(),
        max_tokens=agent.config.model.max_tokens,
    )
    try:
        finished = run_live(
            engine,
            message=args.message,
            history=history,
            tenant=args.tenant,
            environment=args.environment,
            session_id=session_id,
            approver=approver,
            sink=sink,
        )
    except Exception as failure:
        # The stream is under way (run_live sent session first): it ends with the
        # failure as its one terminal line; main() then exits non-zero as before.
        if args.json:
            sink(ErrorEvent(error=str(failure) or type(failure).__name__))
        raise
    # Saved only when the turn finished, so a session never holds an unanswered call.
    store.save(history)
    if not args.json:
        print(finished.text)
    return EXIT_OK


class _SessionFile:
    """The terminal's session history, one JSON file per session under $SIGNOFF_HOME."""

    def __init__(self, session_id: str) -> None:
        home = Path(os.environ.get("SIGNOFF_HOME", Path.home() / ".signoff"))
        self.path = home / "sessions" / f"{session_id}.json"

    def load(self) -> list[Message]:
        if not self.path.exists():
            return []
        return _HISTORY.validate_json(self.path.read_bytes())

    def save(self, history: list[Message]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(_HISTORY.dump_json(history))


if __name__ == "__main__":
    sys.exit(main())
