"""A loopengine-style agent folder in ``signoff run``, ``signoff check`` and ``signoff config``
(issue 13): inline ``rules`` + ``defaultDecision``, ``systemPrompt``, ``maxTurns``, an
``httpNotifier`` webhook and a ``hooks.py``, with no ``actauth.yml``. The terminal
decides asks live, as loopengine's ``cli`` channel does (its httpNotifier and hooks are
for ``http`` turns: tests/e2e/transport/test_loopengine_webhook.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.functional.cli.test_cli import REFUND, ndjson
from tests.support.cli import signoff_cli as signoff
from tests.support.loopengine import SYSTEM_PROMPT, loopengine_agent

if TYPE_CHECKING:
    from pathlib import Path

WEBHOOK = {
    "channel": "webhook",
    "config": {
        "webhookUrl": "https://hooks.example.com/loop",
        "webhookSecret": {"secret": "loop-hook"},
    },
    "events": ["approval", "question", "run_start", "run_finish"],
}


def test_the_folder_runs_in_signoff_run_with_its_inline_rules(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    loopengine_agent(agents, httpNotifier=WEBHOOK)
    hooks = {"LOOP_HOOK_LOG": str(tmp_path / "hooks.log")}

    denied = signoff(
        "--agents",
        str(agents),
        "run",
        "customer-service",
        "--json",
        "--deny",
        REFUND,
        home=tmp_path,
        **hooks,
    )

    assert denied.returncode == 0, denied.stderr
    events = ndjson(denied.stdout)
    decision = next(
        e for e in events if e["type"] == "actauth:decision" and e["tool"] == "issue_refund"
    )
    # the rule moved inline from actauth.yml decides as it did there
    assert decision["decision"] == "ask"
    assert "refund-production-needs-approval" in decision["reason"]
    assert events[-1]["type"] == "done" and events[-1]["stopReason"] == "denied"

    approved = signoff(
        "--agents",
        str(agents),
        "run",
        "customer-service",
        "--approve",
        REFUND,
        home=tmp_path,
        **hooks,
    )
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.startswith("Refunded 42.0 USD for order A-1001")
    # its hooks.py loaded, and fired for neither run: never on the cli channel (seed 000)
    assert not (tmp_path / "hooks.log").exists()


def test_check_passes_and_config_shows_the_loopengine_settings(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    loopengine_agent(agents, httpNotifier=WEBHOOK)

    checked = signoff("check", "--agents", str(agents), home=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "1 agents OK" in checked.stdout and "1 channels" in checked.stdout

    shown = signoff("--agents", str(agents), "config", "customer-service", home=tmp_path)
    config = json.loads(shown.stdout)
    assert config["systemPrompt"] == SYSTEM_PROMPT and config["maxTurns"] == 8
    assert config["rules"]["source"].endswith("agent.yaml")
    assert config["rules"]["defaultDecision"] == "deny"
    assert config["notify"] == {"httpNotifier-customer-service": WEBHOOK["events"]}
    assert config["httpNotifier"] == {
        "channel": "webhook",
        "name": "httpNotifier-customer-service",
        "events": WEBHOOK["events"],
    }
    assert "loop-hook" not in shown.stdout  # never a secret, not even its name


def test_check_warns_about_inline_rules_as_about_an_actauth_file(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    unnamed = {"scope": "*/staging/*", "tool": "issue_refund", "decision": "allow"}
    loopengine_agent(agents, rules=[unnamed])

    checked = signoff("check", "--agents", str(agents), home=tmp_path)

    assert checked.returncode == 0, checked.stderr  # actauth accepts it: a warning only
    assert (
        f"signoff check: warning: customer-service: {agents / 'customer-service' / 'agent.yaml'}"
        ":9: rules[0]: no name; its reason reads matched rule '*/staging/*'"
    ) in checked.stderr.splitlines()


def test_check_names_the_agent_file_and_field_of_a_typescript_only_key(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    loopengine_agent(agents, onRunFinish="async (ctx) => notify(ctx)")

    checked = signoff("check", "--agents", str(agents), home=tmp_path)

    assert checked.returncode == 1
    config = agents / "customer-service" / "agent.yaml"
    line = 1 + [n.split(":")[0] for n in config.read_text().splitlines()].index("onRunFinish")
    assert (
        f"signoff check: customer-service: {config}:{line}: "
        "onRunFinish: onRunFinish takes TypeScript code in loopengine; in signoff, "
        "define on_run_finish(ctx) in hooks.py in the agent's folder"
    ) in checked.stderr
