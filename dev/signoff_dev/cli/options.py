"""Options several commands share."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["AGENTS_HELP", "add_agents_option"]

AGENTS_HELP = "folder of agents (default: $SIGNOFF_AGENTS_DIR or ./agents)"


def add_agents_option(command: argparse.ArgumentParser, help: str = AGENTS_HELP) -> None:
    """``--agents DIR`` after a command's name, as before it (``signoff --agents DIR <command>``).

    SUPPRESS: without the option here, the top-level value stays; with it, this one wins.
    """
    command.add_argument("--agents", type=Path, default=argparse.SUPPRESS, help=help)
