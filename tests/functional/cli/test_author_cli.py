"""The agent author's CLI (issue 11): ``signoff new``, ``signoff check`` on rules and
tools, ``--version``, help on every option, options after the command, colour only
on a terminal. Real subprocesses, as a person types the commands."""

from __future__ import annotations

import argparse
import os
import pty
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from signoff_dev.cli.main import _parser
from tests.conftest import ROOT
from tests.support.cli import MAIN, signoff_cli

if TYPE_CHECKING:
    from pathlib import Path


def signoff(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return signoff_cli(*args, cwd=cwd, home=cwd / ".signoff", **env)


def a_clone(tmp_path: Path) -> Path:
    """What a fresh clone holds for the CLI: the agents folder and the template."""
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "agents", clone / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "template.yaml", clone / "template.yaml")
    return clone


def test_a_new_agent_runs_at_once_and_passes_the_check(tmp_path: Path) -> None:
    clone = a_clone(tmp_path)

    made = signoff("new", "demo-agent", cwd=clone)

    assert made.returncode == 0, made.stderr
    folder = clone / "agents" / "demo-agent"
    assert sorted(p.name for p in folder.iterdir()) == [
        "actauth.yml",
        "agent.yaml",
        "script.yaml",
        "tools.py",
    ]
    assert f"created {os.path.join('agents', 'demo-agent', 'agent.yaml')}" in made.stdout
    # the one rule asks: production needs the approval flag, and the tool then runs
    ran = signoff("run", "demo-agent", "--env", "production", "--approve", "credit 10", cwd=clone)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "Done: 10.0 USD credited."
    assert "gate: issue_credit needs approval (matched rule 'credit-needs-approval')" in (
        ran.stderr
    )
    asked = signoff("run", "demo-agent", "credit 10", cwd=clone)
    assert asked.returncode == 2 and "rerun with --approve or --deny" in asked.stderr
    checked = signoff("check", cwd=clone)
    assert checked.returncode == 0, checked.stderr
    assert "3 agents OK" in checked.stdout and "demo-agent" in checked.stdout
    assert checked.stderr == ""
    # its commented notify example is valid as it stands, once uncommented
    config = folder / "agent.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\n# notify: " in text
    config.write_text(text.replace("\n# notify: ", "\nnotify: "), encoding="utf-8")
    uncommented = signoff("check", cwd=clone)
    assert uncommented.returncode == 0, uncommented.stderr


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("Demo_Agent", "is not an agent name"),
        ("1st-agent", "is not an agent name"),
        ("../escape", "is not an agent name"),
        ("customer-service", "exists; nothing was written"),
    ],
)
def test_new_refuses_a_bad_name_or_an_existing_folder(tmp_path: Path, name: str, says: str) -> None:
    clone = a_clone(tmp_path)
    before = (clone / "agents" / "customer-service" / "agent.yaml").read_text(encoding="utf-8")

    done = signoff("new", name, cwd=clone)

    assert done.returncode == 2
    assert says in done.stderr and done.stdout == ""
    after = (clone / "agents" / "customer-service" / "agent.yaml").read_text(encoding="utf-8")
    assert after == before
    assert not (tmp_path / "escape").exists()


def test_a_misspelled_tool_in_a_rule_warns_naming_file_and_line_and_fails_strict(
    tmp_path: Path,
) -> None:
    clone = a_clone(tmp_path)
    rules = clone / "agents" / "customer-service" / "actauth.yml"
    text = rules.read_text(encoding="utf-8")
    rules.write_text(text.replace("tool: issue_refund\n", "tool: issue_refnd\n", 1))
    line = 1 + rules.read_text(encoding="utf-8").splitlines().index("    tool: issue_refnd")

    done = signoff("check", "agents", cwd=clone)  # the folder as a positional argument

    # actauth loads the file, so signoff does: a warning, exit 0
    assert done.returncode == 0, done.stderr
    path = os.path.join("agents", "customer-service", "actauth.yml")
    assert done.stderr.splitlines() == [
        f"signoff check: warning: customer-service: {path}:{line}: "
        "rules[3] 'refund-staging-allowed'.tool: no tool named 'issue_refnd'; the rule never "
        "applies; did you mean 'issue_refund'? (this agent has Skill, ask_user, "
        "get_shipment_details, issue_refund, lookup_order, send_email)"
    ]
    assert "2 agents OK" in done.stdout

    strict = signoff("check", "--strict", "agents", cwd=clone)

    assert strict.returncode == 1
    assert strict.stderr.splitlines() == [
        *done.stderr.splitlines(),
        "signoff check: 1 problem(s) (incl. 1 warning(s): --strict), 0 of 2 agents "
        "misconfigured under agents",
    ]
    assert strict.stdout == ""


def test_a_when_on_an_argument_the_tool_lacks_warns_naming_the_line(tmp_path: Path) -> None:
    clone = a_clone(tmp_path)
    rules = clone / "agents" / "daily-digest" / "actauth.yml"
    rules.write_text(
        "rules:\n"
        "  - name: big-days\n"
        "    scope: '*'\n"
        "    tool: list_orders\n"
        "    decision: ask\n"
        "    when:\n"
        "      any:\n"
        "        - {field: day, op: eq, value: today}\n"
        "        - {field: dya, op: eq, value: yesterday}\n",
        encoding="utf-8",
    )

    done = signoff("check", "--agents", "agents", "--strict", cwd=clone)

    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        f"signoff check: warning: daily-digest: "
        f"{os.path.join('agents', 'daily-digest', 'actauth.yml')}:9: "
        "rules[0] 'big-days'.when.any[1].field: list_orders has no argument 'dya'; the condition "
        "never holds, so the rule never applies; did you mean 'day'? (it takes day)"
    )


def test_an_agent_yaml_error_names_its_line(tmp_path: Path) -> None:
    clone = a_clone(tmp_path)
    config = clone / "agents" / "daily-digest" / "agent.yaml"
    config.write_text("description: ok\nmodel:\n  provider: scripted\n  script: [x\n")

    done = signoff("check", "agents", cwd=clone)

    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first.startswith(
        f"signoff check: daily-digest: {os.path.join('agents', 'daily-digest', 'agent.yaml')}:5: "
        "invalid YAML: "
    ), first


def test_what_may_be_meant_is_a_warning_with_its_line(tmp_path: Path) -> None:
    # Given a tool glob matching no tool, and a template that allows two environments
    # while a rule names a third
    clone = a_clone(tmp_path)
    template = clone / "template.yaml"
    template.write_text(
        template.read_text(encoding="utf-8").replace(
            "    Default: production\n",
            "    Default: production\n    AllowedValues: [production, staging]\n",
            1,
        ),
        encoding="utf-8",
    )
    rules = clone / "agents" / "daily-digest" / "actauth.yml"
    rules.write_text(
        "rules:\n"
        "  - {name: reads, scope: '*/*', tool: list_orders, decision: allow}\n"
        "  - {name: exports, scope: '*/*', tool: 'export_*', decision: ask}\n"
        "  - {name: qa, scope: '*/qa/*', tool: list_orders, decision: allow}\n",
        encoding="utf-8",
    )

    done = signoff("check", cwd=clone)

    assert done.returncode == 0, done.stderr  # warnings change no exit code
    path = os.path.join("agents", "daily-digest", "actauth.yml")
    assert done.stderr.splitlines() == [
        f"signoff check: warning: daily-digest: {path}:3: rules[1] 'exports'.tool: 'export_*' "
        "is a glob, which signoff matches against tool names; actauth compares tool names "
        "literally and would apply this rule to no tool",
        f"signoff check: warning: daily-digest: {path}:3: rules[1] 'exports'.tool: 'export_*' "
        "matches none of this agent's tools",
        f"signoff check: warning: daily-digest: {path}:4: rules[2] 'qa'.scope: environment 'qa' "
        "is none the template allows (production, staging); the rule applies only where it is",
    ]


def test_two_different_agents_folders_are_a_usage_error(tmp_path: Path) -> None:
    clone = a_clone(tmp_path)
    done = signoff("check", "agents", "--agents", "elsewhere", cwd=clone)
    assert done.returncode == 2
    assert "two agents folders given" in done.stderr


def test_version_and_agents_after_the_command(tmp_path: Path) -> None:
    clone = a_clone(tmp_path)
    shutil.move(clone / "agents", clone / "mine")

    version = signoff("--version", cwd=clone)
    listed = signoff("agents", "--agents", "mine", cwd=clone)
    config = signoff("config", "daily-digest", "--agents", "mine", cwd=clone)

    assert version.returncode == 0 and version.stdout.startswith("signoff 0.")
    assert listed.returncode == 0 and listed.stdout.startswith("customer-service\t")
    assert config.returncode == 0 and '"name": "daily-digest"' in config.stdout


def _options(parser: argparse.ArgumentParser, where: str) -> list[tuple[str, str | None]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _options(sub, f"{where} {name}")
        elif not isinstance(action, argparse._HelpAction):
            found.append((f"{where} {'/'.join(action.option_strings) or action.dest}", action.help))
    return found


def test_every_option_and_argument_has_help_text() -> None:
    missing = [name for name, text in _options(_parser(), "signoff") if not text]
    assert missing == []


def _on_a_terminal(args: list[str], cwd: Path, **env: str) -> str:
    """What the command writes to stderr when stderr is a terminal."""
    controller, terminal = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "SIGNOFF_MODEL")}
    environ.update({"SIGNOFF_HOME": str(cwd / ".signoff"), "TERM": "xterm", **env})
    done = subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        cwd=cwd,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=terminal,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal side is closed: all was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    assert done.returncode == 0
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_only_and_never_with_no_color(tmp_path: Path) -> None:
    clone = a_clone(tmp_path)
    run = ["run", "customer-service", "--env", "staging", "order A-1001 arrived broken, refund it?"]

    coloured = _on_a_terminal(run, clone)
    plain = _on_a_terminal(run, clone, NO_COLOR="1")
    piped = signoff(*run, cwd=clone)

    assert "\x1b[32mgate: issue_refund allowed" in coloured
    assert "\x1b[" not in plain and "gate: issue_refund allowed" in plain
    assert "\x1b[" not in piped.stderr and "gate: issue_refund allowed" in piped.stderr
