"""``signoff check``: every agent loaded as the functions load it, before a build ships it.

A cold start reports a misconfigured agent and keeps serving the others
(``checked_agents``); the build is stricter, so a bad ``notify`` name, a YAML
error, a broken rule or a ``tools.py`` that does not import is found on this
machine, not at an agent's first request. ``channels.yaml`` is loaded once, then
each agent fully (``agent.yaml``, ``actauth.yml``, ``tools.py``, skills) with its
``notify`` checked against it: the ``AgentCatalog.problems()`` checks and more.
The template's agent schedules must be those of the agents' ``schedule``
(``signoff template sync`` writes them; ``--template``, default the
``template.yaml`` beside the agents folder).
With ``--layer-requirements`` (``make build`` passes the engine layer's file and
``requirements-channels.txt``, whose pins it adds to the layer for the channels
configured: ``dev/channel_libraries.py``), a channel whose client library is an
optional extra (redis, database) must have that library in one of those files:
deployed, the notifier would otherwise fail its rows on every send, and the build
is where to say what to add.

A rule file that loads can still draw warnings, printed on stderr one line each
(yellow on a terminal): signoff loads and decides every file actauth accepts as
actauth does, so its stricter checks (``signoff.gate.rule_warnings``: a rule
without a name, a duplicate name, an ignored key, a tool glob actauth would not
match) are warnings, and so is what may be meant (``signoff.agents.lint``: a rule
for a tool the agent does not have, with the closest name, a ``when`` on an
argument its tool does not take, a tool glob matching no tool, a scope
environment the template's ``Environment`` parameter does not allow). Warnings
change no exit code unless ``--strict`` (``make build`` passes it): then each is
a problem, so a typo never deploys; rule files shared by agents with different
tools are the reason to leave it off.

Every line names the file and, in a YAML file, the line (``file:line: field:
problem``), as a compiler does, so an editor jumps there.

Exit codes: 0 every agent loads (one summary line on stdout), 1 a problem (one
line per agent on stderr naming the file and the field; with ``--strict``, a
warning too), or no agents at all.
"""

from __future__ import annotations

import os
import re
import sys
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path
from typing import TYPE_CHECKING

from signoff.errors import ConfigError, UsageError
from signoff_dev.cli.options import add_agents_option
from signoff_dev.cli.style import style_for
from signoff_dev.lines import located, warning_at

if TYPE_CHECKING:
    import argparse

    from signoff.agents import AgentCatalog
    from signoff_dev.cli.style import Style

__all__ = ["channel_extras", "check_agents", "extra_requirements", "register", "rule_warnings_of"]

EXIT_OK, EXIT_PROBLEMS = 0, 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``check`` command to the ``signoff`` parser."""
    check = commands.add_parser(
        "check", help="load every agent and channels.yaml; exit 1 naming each problem"
    )
    check.add_argument(
        "agents_dir",
        nargs="?",
        type=Path,
        default=None,
        metavar="AGENTS_DIR",
        help="folder of agents (same as --agents)",
    )
    add_agents_option(check)
    check.add_argument(
        "--layer-requirements",
        type=Path,
        action="append",
        default=None,
        help="the Lambda layer's requirements.txt (repeat it for more files): every "
        "optional library a configured channel needs must be listed in one of them",
    )
    check.add_argument(
        "--template",
        type=Path,
        default=None,
        help="the SAM template whose agent schedules must match the agents' (default: "
        "template.yaml beside the agents folder, when there is one)",
    )
    check.add_argument(
        "--strict",
        action="store_true",
        help="count every warning (a rule for a tool the agent lacks, …) as a problem: exit 1",
    )
    check.set_defaults(command=_check)


# A requirement's project name (PEP 508): what precedes extras, versions and markers.
_PROJECT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _project(requirement: str) -> str | None:
    found = _PROJECT.match(requirement)
    return re.sub(r"[-_.]+", "-", found.group(1)).lower() if found else None


def extra_requirements(extra: str) -> list[str]:
    """What ``signoff[<extra>]`` installs, as pyproject.toml's optional dependencies say."""
    try:
        declared = requires("signoff") or []
    except PackageNotFoundError:
        return []
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    return [r.split(";")[0].strip() for r in declared if marker.search(r)]


def channel_extras(catalog: AgentCatalog) -> dict[str, dict[str, str]]:
    """The ``signoff[<extra>]`` each configured channel needs: extra → {channel: type}.

    Channels of a type without an optional client library (webhook, Slack, …) need none.
    """
    from signoff.channels.registry import CHANNEL_TYPES

    found: dict[str, dict[str, str]] = {}
    for name, settings in catalog.channels.channels.items():
        entry = CHANNEL_TYPES.get(settings.type)
        if entry is not None and entry.extra is not None:
            found.setdefault(entry.extra, {})[name] = settings.type
    return found


def missing_from_layer(
    catalog: AgentCatalog, layer_requirements: Path | list[Path]
) -> dict[str, str]:
    """Each configured channel whose optional library the layer lacks, with what to add."""
    files = layer_requirements if isinstance(layer_requirements, list) else [layer_requirements]
    listed = {
        name
        for path in files
        for line in path.read_text().splitlines()
        if (name := _project(line.split("#")[0]))
    }
    where = " or ".join(str(path) for path in files)
    found: dict[str, str] = {}
    for extra, channels in channel_extras(catalog).items():
        needed = [r for r in extra_requirements(extra) if _project(r) not in listed]
        for name, kind in channels.items() if needed else ():
            found[name] = (
                f"type {kind} needs {', '.join(needed)} in the Lambda layer: add it to "
                f"{where} (deployed, its rows would fail: the library is missing)"
            )
    return found


def check_agents(catalog: AgentCatalog) -> dict[str, ConfigError]:
    """Each agent's first problem, by agent name (``""`` for ``channels.yaml`` itself).

    An invalid ``channels.yaml`` is reported once, on its own: every agent's
    ``notify`` is checked against it, so nothing more can be said until it loads.
    """
    try:
        catalog.channels  # noqa: B018 - loaded (and checked) once, before the agents
    except ConfigError as exc:
        return {"": exc}
    found: dict[str, ConfigError] = {}
    for name in catalog.names():
        try:
            # as a cold start loads it: notify against channels.yaml, and a rule's
            # from / approvals against people.yaml
            catalog.get(name)
        except ConfigError as exc:
            found[name] = exc
    return found


def rule_warnings_of(
    catalog: AgentCatalog, agents: list[str], environments: list[str] | None = None
) -> list[str]:
    """``<agent>: <file>:<line>: <warning>`` for each agent's rules (``agents`` load): its
    ``actauth.yml``, or loopengine's inline ``rules`` in its ``agent.yaml``; checked
    against its tools and the deployment's ``environments`` (None: any)."""
    from signoff.agents.lint import ladder_warnings, rule_warnings_for
    from signoff.gate import read_rules_file, rule_warnings

    lines = []
    for name in agents:
        agent = catalog.get(name)
        config = agent.config
        late = ladder_warnings(agent.rules.rules, config.escalate, config.approval_timeout)
        # approvalTimeout is agent.yaml's: a ladder past it is that file's concern
        lines += [f"{name}: {catalog.root / name / 'agent.yaml'}: {w}" for w in late]
        path = catalog.root / name / "actauth.yml"
        if path.exists():
            found = rule_warnings(read_rules_file(path))
        elif agent.config.rules is not None:
            path = catalog.root / name / "agent.yaml"
            # defaultDecision is validated: nothing to warn
            found = rule_warnings({"rules": agent.config.rules})
        else:
            continue
        found += rule_warnings_for(agent.rules.rules, agent.tools, environments)
        lines += [f"{name}: {warning_at(str(path), w)}" for w in found]
    return lines


def template_environments(template: Path) -> list[str] | None:
    """The environments ``template``'s ``Environment`` parameter allows (``AllowedValues``),
    or None when it allows any value (a rule's environment cannot be checked then)."""
    from signoff_dev.local.template import load_template

    parameter = load_template(template).get("Parameters", {}).get("Environment", {})
    allowed = parameter.get("AllowedValues")
    return [str(value) for value in allowed] if isinstance(allowed, list) else None


def _schedule_drift(
    args: argparse.Namespace, catalog: AgentCatalog, problems: dict[str, ConfigError]
) -> list[str]:
    """Each way the template's agent schedules differ from the agents', printed."""
    from signoff_dev.cli.template import schedule_drift

    template = args.template or catalog.root.parent / "template.yaml"
    if args.template is None and not template.is_file():
        return []  # an agents folder outside a project: no template to keep in step
    if "" in problems:
        return []  # channels.yaml is broken: no agent loads
    found = schedule_drift(template, catalog, skip=set(problems))
    for drift in found:
        print(
            f"signoff check: {drift.agent or 'template'}: {template}: {drift.difference}",
            file=sys.stderr,
        )
    return [drift.difference for drift in found]


def _agents_dir(args: argparse.Namespace) -> Path:
    given = [where for where in (args.agents_dir, args.agents) if where is not None]
    if len(set(given)) > 1:
        raise UsageError(f"two agents folders given: {given[0]} and --agents {given[1]}")
    return given[0] if given else Path(os.environ.get("SIGNOFF_AGENTS_DIR", "agents"))


def _check(args: argparse.Namespace) -> int:
    from signoff.agents import AgentCatalog

    paint = style_for(sys.stderr)
    root = _agents_dir(args)
    catalog = AgentCatalog(root)
    names = catalog.names()
    if not names:
        print(f"signoff check: no agents under {root} (no <name>/agent.yaml)", file=sys.stderr)
        return EXIT_PROBLEMS
    problems = check_agents(catalog)
    warnings = _warned(args, catalog, names, problems, paint)
    strict = len(warnings) if args.strict else 0
    for name, problem in problems.items():
        text = located(problem.file, problem.field, problem.problem)
        print(paint(f"signoff check: {name or 'channels'}: {text}", "red"), file=sys.stderr)
    layer = _layer_gaps(args, catalog, problems, paint)
    drift = _schedule_drift(args, catalog, problems)
    if problems or layer or drift or strict:
        agents = sum(1 for name in problems if name)
        counted = f" (incl. {strict} warning(s): --strict)" if strict else ""
        print(
            f"signoff check: {len(problems) + len(layer) + len(drift) + strict} problem(s)"
            f"{counted}, {agents} of {len(names)} agents misconfigured under {root}",
            file=sys.stderr,
        )
        return EXIT_PROBLEMS
    print(
        f"signoff check: {len(names)} agents OK under {root} ({', '.join(names)}), "
        f"{len(catalog.channels.names())} channels"
    )
    return EXIT_OK


def _warned(
    args: argparse.Namespace,
    catalog: AgentCatalog,
    names: list[str],
    problems: dict[str, ConfigError],
    paint: Style,
) -> list[str]:
    """The rule warnings of the agents that load, printed."""
    template = args.template or catalog.root.parent / "template.yaml"
    environments = template_environments(template) if template.is_file() else None
    # A broken channels.yaml ("") fails every agent's load: no rules to warn about.
    healthy = [] if "" in problems else [n for n in names if n not in problems]
    warnings = rule_warnings_of(catalog, healthy, environments)
    for warning in warnings:
        print(paint(f"signoff check: warning: {warning}", "yellow"), file=sys.stderr)
    return warnings


def _layer_gaps(
    args: argparse.Namespace, catalog: AgentCatalog, problems: dict[str, ConfigError], paint: Style
) -> dict[str, str]:
    """What the channels need that the layer's requirements lack (``--layer-requirements``),
    printed."""
    if not args.layer_requirements or "" in problems:
        return {}
    layer = missing_from_layer(catalog, args.layer_requirements)
    for channel, missing in layer.items():
        print(paint(f"signoff check: channel {channel}: {missing}", "red"), file=sys.stderr)
    return layer
