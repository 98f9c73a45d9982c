"""``signoff check``: every agent loaded as the functions load it, before a build ships it.

A cold start reports a misconfigured agent and keeps serving the others
(``checked_agents``); the build is stricter, so a bad ``notify`` name, a YAML
error, a broken rule or a ``tools.py`` that does not import is found on this
machine, not at an agent's first request. ``channels.yaml`` is loaded once, then
each agent fully (``agent.yaml``, ``actauth.yml``, ``tools.py``, skills) with its
``notify`` checked against it: the ``AgentCatalog.problems()`` checks and more.

Exit codes: 0 every agent loads (one summary line on stdout), 1 a problem (one
line per agent on stderr naming the file and the field), or no agents at all.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from signoff.errors import ConfigError

if TYPE_CHECKING:
    from signoff.agents import AgentCatalog

__all__ = ["check_agents", "register"]

EXIT_OK, EXIT_PROBLEMS = 0, 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``check`` command to the ``signoff`` parser."""
    check = commands.add_parser(
        "check", help="load every agent and channels.yaml; exit 1 naming each problem"
    )
    # Also accepted after the command (`signoff check --agents DIR`); SUPPRESS keeps
    # the top-level `signoff --agents DIR check` from being overwritten by a default.
    check.add_argument(
        "--agents",
        type=Path,
        default=argparse.SUPPRESS,
        help="folder of agents (default: $SIGNOFF_AGENTS_DIR or ./agents)",
    )
    check.set_defaults(command=_check)


def check_agents(catalog: AgentCatalog) -> dict[str, ConfigError]:
    """Each agent's first problem, by agent name (``""`` for ``channels.yaml`` itself).

    An invalid ``channels.yaml`` is reported once, on its own: every agent's
    ``notify`` is checked against it, so nothing more can be said until it loads.
    """
    from signoff.agents import load_agent

    try:
        channels = catalog.channels
    except ConfigError as exc:
        return {"": exc}
    found: dict[str, ConfigError] = {}
    for name in catalog.names():
        try:
            load_agent(catalog.root / name, channels=channels)
        except ConfigError as exc:
            found[name] = exc
    return found


def _check(args: argparse.Namespace) -> int:
    from signoff.agents import AgentCatalog

    root = args.agents or Path(os.environ.get("SIGNOFF_AGENTS_DIR", "agents"))
    catalog = AgentCatalog(root)
    names = catalog.names()
    if not names:
        print(f"signoff check: no agents under {root} (no <name>/agent.yaml)", file=sys.stderr)
        return EXIT_PROBLEMS
    problems = check_agents(catalog)
    for name, problem in problems.items():
        # ConfigError's text is "<file>: <field>: <problem>"
        print(f"signoff check: {name or 'channels'}: {problem}", file=sys.stderr)
    if problems:
        agents = sum(1 for name in problems if name)
        print(
            f"signoff check: {len(problems)} problem(s), {agents} of {len(names)} agents "
            f"misconfigured under {root}",
            file=sys.stderr,
        )
        return EXIT_PROBLEMS
    print(
        f"signoff check: {len(names)} agents OK under {root} ({', '.join(names)}), "
        f"{len(catalog.channels.names())} channels"
    )
    return EXIT_OK
