"""``signoff send --url URL <agent> "message"``: one turn of a running stack, as ``run`` shows it.

The turn goes through ``signoff.client`` (SSE when the server offers the stream,
at ``--stream-url`` when it is elsewhere, e.g. a deployed stack's ``StreamUrl``;
long-poll on the status route otherwise; ``--transport`` forces one) and is
printed by ``run``'s printer: the same NDJSON with ``--json``, the same lines
without. A pending approval or question is asked on the terminal as ``run``
asks it, or answered from ``--approve`` / ``--deny`` (``--reason TEXT``) / ``--answer``;
without either, the command stops with ``run``'s usage error (exit 2) and the
turn waits on the server for its approval link. Exit codes are ``run``'s: 0 the
turn finished, 1 it failed, 2 a usage error.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from signoff_dev.cli.options import add_decision_options, flag_decision

if TYPE_CHECKING:
    import argparse

    from signoff.client import Pending
    from signoff.engine.live import LiveApprover

__all__ = ["register"]

EXIT_OK, EXIT_ERROR = 0, 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    send = commands.add_parser("send", help="send one message to an agent of a running stack")
    send.add_argument("agent", help="the agent's name on that stack")
    send.add_argument("message", help="the user's message that starts the turn")
    send.add_argument(
        "--url", required=True, help="the stack's base URL (signoff dev's, or the API's)"
    )
    send.add_argument(
        "--stream-url",
        help="the SSE stream's base URL when it is not --url's (a deployed stack's StreamUrl)",
    )
    send.add_argument(
        "--api-key",
        default=os.environ.get("SIGNOFF_API_KEY"),
        help="the API key (default: $SIGNOFF_API_KEY)",
    )
    send.add_argument("--json", action="store_true", help="NDJSON events on stdout")
    send.add_argument("--session", help="continue this session (default: a new one)")
    send.add_argument(
        "--transport",
        choices=("auto", "sse", "poll"),
        default="auto",
        help="SSE, long-poll, or SSE when the server has it (default: auto)",
    )
    add_decision_options(send)
    send.set_defaults(command=_send)


def _send(args: argparse.Namespace) -> int:
    from signoff.client import Client
    from signoff.errors import Absent, SignoffError, UsageError
    from signoff.events import ErrorEvent
    from signoff_dev.cli.approvers import FlagApprover, TerminalApprover
    from signoff_dev.cli.printer import event_printer

    decision = flag_decision(args)
    sink = event_printer(args.json)
    approver: LiveApprover
    if decision is None and args.answer is None and sys.stdin.isatty():
        approver = TerminalApprover(sys.stdin, sys.stderr)
    else:
        approver = FlagApprover(decision, args.answer, args.reason or "")
    with Client(
        args.url, api_key=args.api_key, stream_url=args.stream_url, transport=args.transport
    ) as client:
        turn = client.send(args.agent, args.message, session=args.session)
        printed = False
        try:
            for event in turn:
                sink(event)
                printed = True
                if turn.pending is not None:
                    _decide(turn.pending, approver)
        except Absent as refused:
            if printed:
                raise
            # Refused before the turn began (an unknown agent): run's usage error.
            raise UsageError(str(refused)) from None
        except SignoffError as failure:
            # As run: once the stream is under way, it ends with the failure's line.
            if args.json and printed and turn.done is None and turn.error is None:
                sink(ErrorEvent(error=str(failure) or type(failure).__name__))
            raise
    if turn.error is not None:
        print(f"signoff: {turn.error}", file=sys.stderr)
        return EXIT_ERROR
    if not args.json and turn.done is not None:
        print(turn.done.text)
    return EXIT_OK


def _decide(pending: Pending, approver: LiveApprover) -> None:
    """Resolve ``pending`` on the server with what the terminal or the flags say."""
    from signoff.engine import Approved, Denied

    resolution = approver(pending.event, pending.id)
    if isinstance(resolution, Approved):
        pending.approve()
    elif isinstance(resolution, Denied):
        pending.deny(resolution.reason or None)
    else:
        pending.answer(resolution.answer)
