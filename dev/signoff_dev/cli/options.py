"""Options several commands share."""

from __future__ import annotations

import argparse
from pathlib import Path

from signoff.errors import UsageError

__all__ = ["AGENTS_HELP", "add_agents_option", "add_decision_options", "flag_decision"]

AGENTS_HELP = "folder of agents (default: $SIGNOFF_AGENTS_DIR or ./agents)"


def add_agents_option(command: argparse.ArgumentParser, help: str = AGENTS_HELP) -> None:
    """``--agents DIR`` after a command's name, as before it (``signoff --agents DIR <command>``).

    SUPPRESS: without the option here, the top-level value stays; with it, this one wins.
    """
    command.add_argument("--agents", type=Path, default=argparse.SUPPRESS, help=help)


def add_decision_options(command: argparse.ArgumentParser) -> None:
    """``--approve`` / ``--deny`` (switches, one or the other), ``--reason TEXT`` (the deny's
    reason, which the model reads) and ``--answer TEXT``: what a turn's asks get without a
    terminal, the same on every command that runs one.

    No flag takes an optional value: ``--deny "message"`` would read the message as
    the reason (``tests/unit/dev/test_cli_flags.py`` walks the parsers for such a flag).
    """
    decision = command.add_mutually_exclusive_group()
    decision.add_argument(
        "--approve",
        action="store_const",
        const="approve",
        dest="decision",
        help="approve every call a rule asks about (no prompt)",
    )
    decision.add_argument(
        "--deny",
        action="store_const",
        const="deny",
        dest="decision",
        help="deny every call a rule asks about (no prompt)",
    )
    command.add_argument(
        "--reason",
        default=None,
        metavar="TEXT",
        help="with --deny: why, for the model to read in the denied call's result",
    )
    command.add_argument(
        "--answer", metavar="TEXT", help="the answer to give if the agent asks a question"
    )


def flag_decision(args: argparse.Namespace) -> str | None:
    """``--approve`` / ``--deny``'s decision (None: neither), once ``--reason`` fits it.

    Raises:
        UsageError: ``--reason`` without ``--deny``.
    """
    decision: str | None = args.decision
    if args.reason is not None and decision != "deny":
        raise UsageError("--reason is the reason of a --deny: give --deny too")
    return decision
