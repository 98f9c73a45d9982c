"""``signoff new <name>``: a new agent folder that runs at once.

The folder holds what every agent has — ``agent.yaml`` on the scripted model,
``tools.py`` with one tool, ``actauth.yml`` with one ``ask`` rule and the
``script.yaml`` the scripted model plays — so ``signoff run <name>`` and a
running ``signoff dev`` (which loads agents on first use) take it as it is, and
``signoff check`` passes. Nothing is overwritten: an existing folder is refused.

Exit codes: 0 created (the files are listed on stdout), 2 a usage error (a name
that is not an agent name, or a folder that exists).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from signoff.errors import UsageError
from signoff_dev.cli.options import add_agents_option

if TYPE_CHECKING:
    import argparse

__all__ = ["AGENT_NAME", "register", "scaffold"]

EXIT_OK = 0
# A path segment of the API's routes, a template event's name and a folder on
# every filesystem: lower-case letters, digits and inner hyphens.
AGENT_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_MAX_NAME = 64

_AGENT_YAML = """\
# The agent's settings; every key is in docs/agents.md.
description: {name}, a new agent (a scripted model, one tool, one rule).
system: |
  You are the {name} agent. You help customers with store credit.
model:
  # The scripted model plays script.yaml: no API key needed. Put a real model
  # here (provider: openai, model: gpt-4o-mini) or set SIGNOFF_MODEL.
  provider: scripted
  script: script.yaml
maxTurns: 6
approvalTimeout: 24h
# notify: {{local-webhook: [approval, question]}}   # a channel of channels.yaml, its events
"""

_TOOLS_PY = '''\
"""Tools of the {name} agent: typed functions marked with @tool (docs/agents.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from signoff.tools import ToolContext, tool


@tool(idempotent=True, summary="Credit {{amount}} {{currency}} to customer {{customerId}}")
def issue_credit(
    customerId: Annotated[str, Field(description="The customer's id, e.g. C-42")],
    amount: Annotated[float, Field(gt=0, description="How much to credit")],
    ctx: ToolContext,
    currency: str = "USD",
) -> dict[str, object]:
    """Give a customer store credit."""
    # A real tool calls your systems here, passing ctx.idempotency_key along so
    # a retried call does not credit twice.
    return {{
        "customerId": customerId,
        "credited": amount,
        "currency": currency,
        "reference": ctx.idempotency_key,
    }}
'''

_ACTAUTH_YML = """\
# The rules gate (actauth's format; docs/agents.md#actauthyml-the-rules).
# A scope is a glob over tenant/environment/agent; the most specific rule wins.
default_decision: deny   # a call no rule matches is refused

rules:
  # Credit moves money: a person signs off on every one.
  - name: credit-needs-approval
    scope: "*"
    tool: issue_credit
    decision: ask
"""

_SCRIPT_YAML = """\
# What the scripted model answers (docs/agents.md#scriptyaml-the-scripted-model).
# The first scenario whose `match` (a regular expression) finds the latest user
# message plays its steps, one per model call.
scenarios:
  - match: '(?i)(?P<amount>\\d+(\\.\\d+)?)'
    steps:
      - text: "I will credit {{amount}} USD to customer C-42."
        call: [{{tool: issue_credit, args: {{customerId: C-42, amount: "{{amount}}"}}}}]
      - text: "Done: {{result.issue_credit.credited}} {{result.issue_credit.currency}} credited."
        otherwise: "The credit was not given: {{result.issue_credit}}"
  - match: ''
    steps:
      - text: "How much credit should customer C-42 get? Say an amount, e.g. 'credit 10'."
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``new`` command to the ``signoff`` parser."""
    new = commands.add_parser(
        "new", help="create an agent folder that runs at once (scripted model, one tool, one rule)"
    )
    new.add_argument(
        "name", help="the agent's name: lower-case letters, digits and hyphens (e.g. demo-agent)"
    )
    add_agents_option(
        new, "folder of agents to create it in (default: $SIGNOFF_AGENTS_DIR or ./agents)"
    )
    new.set_defaults(command=_new)


def scaffold(root: Path, name: str) -> list[Path]:
    """Write the agent ``name`` under ``root``; the files written, in order.

    Raises:
        UsageError: ``name`` is not an agent name, or ``root/name`` exists.
    """
    if not AGENT_NAME.match(name) or len(name) > _MAX_NAME:
        raise UsageError(
            f"{name!r} is not an agent name: use lower-case letters, digits and hyphens, "
            f"starting with a letter, at most {_MAX_NAME} characters (e.g. demo-agent)"
        )
    folder = root / name
    if folder.exists():
        raise UsageError(f"{folder} exists; nothing was written (pick another name)")
    folder.mkdir(parents=True)
    written = []
    for file, text in (
        ("agent.yaml", _AGENT_YAML),
        ("tools.py", _TOOLS_PY),
        ("actauth.yml", _ACTAUTH_YML),
        ("script.yaml", _SCRIPT_YAML),
    ):
        (folder / file).write_text(text.format(name=name), encoding="utf-8")
        written.append(folder / file)
    return written


def _new(args: argparse.Namespace) -> int:
    root = args.agents or Path(os.environ.get("SIGNOFF_AGENTS_DIR", "agents"))
    for path in scaffold(root, args.name):
        print(f"created {path}")
    where = f" --agents {root}" if args.agents is not None else ""
    print(f'try: signoff run {args.name}{where} --env production --approve "credit 10"')
    return EXIT_OK
