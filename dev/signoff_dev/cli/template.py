"""``signoff template sync``: the template's agent schedules, generated from ``agent.yaml``.

An agent's ``schedule`` (``agents/<name>/agent.yaml``) is the one place a
schedule is written. In ``template.yaml`` the message function's schedule
events stand between two marker lines; ``sync`` rewrites what is between them
from every agent's schedule, one ``<Agent>Schedule`` event each::

    # signoff template sync: BEGIN agent schedules (...)
    DailyDigestSchedule:
      Type: Schedule
      Properties: {Schedule, State, Input: {"agent", "message", "tenant"}}
    # signoff template sync: END agent schedules

``schedule_drift`` is what ``signoff check`` (run by ``make template`` before a
build or test) reports when the two differ, naming the agent and the difference.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import yaml

from signoff.errors import ConfigError, UsageError
from signoff_dev.cli.options import add_agents_option

if TYPE_CHECKING:
    import argparse

    from signoff.agents import AgentCatalog
    from signoff.agents.config import ScheduleSettings

__all__ = [
    "BEGIN",
    "END",
    "Drift",
    "register",
    "schedule_drift",
    "synced",
]

EXIT_OK, EXIT_PROBLEMS = 0, 1
BEGIN: Final = "# signoff template sync: BEGIN agent schedules"
END: Final = "# signoff template sync: END agent schedules"
_NOTE: Final = "(from each agent.yaml's schedule: edit those, then run it)"
_SYNC: Final = "run `signoff template sync`"


@dataclass(frozen=True)
class Drift:
    """One difference between an agent's schedule and the template's: ``agent`` is
    ``""`` when it is the template's own (no marked block)."""

    agent: str
    difference: str


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``template sync`` to the ``signoff`` parser."""
    template = commands.add_parser("template", help="keep template.yaml in step with the agents")
    actions = template.add_subparsers(required=True, metavar="action")
    sync = actions.add_parser(
        "sync", help="rewrite the template's agent schedules from each agent.yaml's schedule"
    )
    add_agents_option(sync)
    sync.add_argument(
        "--template", type=Path, default=Path("template.yaml"), help="default: ./template.yaml"
    )
    sync.set_defaults(command=_sync)


def event_name(agent: str) -> str:
    """The template event of ``agent``'s schedule: ``daily-digest`` → ``DailyDigestSchedule``."""
    words = re.split(r"[^A-Za-z0-9]+", agent)
    return "".join(word[:1].upper() + word[1:] for word in words) + "Schedule"


def _schedules(catalog: AgentCatalog) -> dict[str, ScheduleSettings]:
    """Each agent's schedule, by agent name (agents without one are absent).

    Raises:
        ConfigError: an agent does not load, or two agents' events would share a name.
    """
    found: dict[str, ScheduleSettings] = {}
    events: dict[str, str] = {}
    for name in catalog.names():
        schedule = catalog.get(name).config.schedule
        if schedule is None:
            continue
        event = event_name(name)
        if event in events:
            raise ConfigError(
                str(catalog.root / name / "agent.yaml"),
                "schedule",
                f"its template event {event} is agent {events[event]}'s too: rename one agent",
            )
        events[event] = name
        found[name] = schedule
    return found


def _scalar(value: str) -> str:
    """``value`` as one YAML scalar, quoted only when it must be."""
    return yaml.safe_dump(value, width=10**6, allow_unicode=True).removesuffix("\n...\n").strip()


def _input(agent: str, schedule: ScheduleSettings) -> str:
    # What EventBridge passes the message function as its event.
    return json.dumps(
        {"agent": agent, "message": schedule.message, "tenant": schedule.tenant},
        ensure_ascii=False,
    )


def _block(schedules: dict[str, ScheduleSettings], indent: str, agents_dir: str) -> list[str]:
    lines = [f"{indent}{BEGIN} {_NOTE}"]
    for agent, schedule in sorted(schedules.items()):
        state = (
            f"!If [{schedule.condition}, ENABLED, DISABLED]" if schedule.condition else "ENABLED"
        )
        source = f"The {agent} agent's run ({agents_dir}/{agent}/agent.yaml)."
        lines += [
            f"{indent}{event_name(agent)}:",
            f"{indent}  Type: Schedule",
            f"{indent}  Properties:",
            f"{indent}    Description: {_scalar(source)}",
            f"{indent}    Schedule: {_scalar(schedule.expression)}",
            f"{indent}    State: {state}",
            f"{indent}    Input: {_scalar(_input(agent, schedule))}",
        ]
    return [*lines, f"{indent}{END}"]


def _marked(lines: list[str], template: Path) -> tuple[int, int]:
    """The indices of the BEGIN and END lines.

    Raises:
        ConfigError: the markers are missing, repeated or out of order.
    """
    begins = [i for i, line in enumerate(lines) if line.strip().startswith(BEGIN)]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise ConfigError(
            str(template),
            "",
            f"needs one '{BEGIN}' line and one '{END}' line after it, among the message "
            "function's Events, where the agents' schedules are generated",
        )
    return begins[0], ends[0]


def synced(template: Path, catalog: AgentCatalog) -> str:
    """``template``'s text with its marked block generated from the agents' schedules.

    Raises:
        ConfigError: no marked block, or an agent does not load.
    """
    text = template.read_text(encoding="utf-8")
    lines = text.splitlines()
    begin, end = _marked(lines, template)
    indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
    agents_dir = os.path.relpath(catalog.root.resolve(), template.resolve().parent)
    block = _block(_schedules(catalog), indent, Path(agents_dir).as_posix())
    return "\n".join([*lines[:begin], *block, *lines[end + 1 :]]) + "\n"


def _template_schedules(template: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each agent the template schedules: (event name, the event's properties)."""
    from signoff_dev.local.template import load_template

    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for resource in load_template(template).get("Resources", {}).values():
        events = (resource.get("Properties") or {}).get("Events") or {}
        for name, event in events.items():
            props = event.get("Properties") or {}
            if event.get("Type") not in ("Schedule", "ScheduleV2") or "Input" not in props:
                continue
            try:
                agent = str(json.loads(props["Input"])["agent"])
            except (TypeError, ValueError, KeyError):
                agent = f"(event {name})"
            found[agent] = (name, props)
    return found


def _state(props: dict[str, Any]) -> str | None:
    """The condition an event's State follows; None when it is always on."""
    from signoff_dev.local.template import Tag

    state = props.get("State", "ENABLED")
    if isinstance(state, Tag) and state.name == "If" and state.value[1:] == ["ENABLED", "DISABLED"]:
        return str(state.value[0])
    return None if state == "ENABLED" else f"State {state}"


def schedule_drift(template: Path, catalog: AgentCatalog, *, skip: set[str]) -> list[Drift]:
    """How the template's agent schedules differ from the agents' (``skip``: agents that
    do not load, already reported); empty when they match."""
    try:
        _marked(template.read_text(encoding="utf-8").splitlines(), template)
    except ConfigError as exc:
        return [Drift("", f"{exc}; {_SYNC}")]
    names = [name for name in catalog.names() if name not in skip]
    wanted = {
        name: schedule
        for name in names
        if (schedule := catalog.get(name).config.schedule) is not None
    }
    have = _template_schedules(template)
    found: list[Drift] = []
    for agent in sorted(set(wanted) | set(have)):
        if agent in skip:
            continue
        if agent not in have:
            found.append(Drift(agent, f"agent.yaml has a schedule the template lacks; {_SYNC}"))
            continue
        event, props = have[agent]
        if agent not in wanted:
            found.append(
                Drift(agent, f"the template's {event} runs it, but its agent.yaml has no schedule")
            )
            continue
        schedule = wanted[agent]
        given = json.loads(props["Input"])
        for label, ours, theirs in (
            ("event", event_name(agent), event),
            ("expression", schedule.expression, props.get("Schedule")),
            ("message", schedule.message, given.get("message")),
            ("tenant", schedule.tenant, given.get("tenant")),
            ("condition", schedule.condition, _state(props)),
        ):
            if ours != theirs:
                found.append(
                    Drift(
                        agent,
                        f"{label} {ours!r} in agent.yaml, {theirs!r} in the template's {event}; "
                        f"{_SYNC}",
                    )
                )
    if not found and not skip and synced(template, catalog) != template.read_text("utf-8"):
        found.append(Drift("", f"the generated schedule block was edited by hand; {_SYNC}"))
    return found


def _sync(args: argparse.Namespace) -> int:
    from signoff.agents import AgentCatalog

    root = args.agents or Path(os.environ.get("SIGNOFF_AGENTS_DIR", "agents"))
    if not args.template.is_file():
        raise UsageError(f"no template at {args.template}")
    catalog = AgentCatalog(root)
    text = synced(args.template, catalog)
    changed = text != args.template.read_text(encoding="utf-8")
    if changed:
        args.template.write_text(text, encoding="utf-8")
    scheduled = [name for name in catalog.names() if catalog.get(name).config.schedule]
    print(
        f"signoff template sync: {args.template} {'updated' if changed else 'already in step'}: "
        f"{len(scheduled)} agent schedule(s){': ' + ', '.join(scheduled) if scheduled else ''}",
        file=sys.stdout,
    )
    return EXIT_OK
