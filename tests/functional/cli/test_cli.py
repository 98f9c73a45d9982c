"""The ``signoff`` command as a user runs it: a real subprocess, real sample agents."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import validate_event
from tests.support.cli import signoff_cli as signoff

if TYPE_CHECKING:
    from pathlib import Path

REFUND = "order A-1001 arrived broken, can you refund it?"


def ndjson(stdout: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in stdout.splitlines()]
    for line in lines:
        validate_event(line)
    return lines


def test_staging_refund_runs_without_approval(tmp_path: Path) -> None:
    done = signoff("run", "customer-service", "--json", "--env", "staging", REFUND, home=tmp_path)
    assert done.returncode == 0, done.stderr
    events = ndjson(done.stdout)
    assert events[0]["type"] == "session" and events[-1]["type"] == "done"
    refund = [e for e in events if e["type"] == "tool:result" and e["tool"] == "issue_refund"]
    assert [e["statusText"] for e in refund] == ["Approved."]
    assert "approval:pending" not in [e["type"] for e in events]
    assert events[-1]["text"].startswith("Refunded 42.0 USD for order A-1001")
    assert "stopReason" not in events[-1]


def test_production_refund_denied_with_the_flag(tmp_path: Path) -> None:
    done = signoff(
        "run", "customer-service", "--json", "--env", "production", "--deny", REFUND, home=tmp_path
    )
    assert done.returncode == 0, done.stderr
    events = ndjson(done.stdout)
    kinds = [e["type"] for e in events]
    decision = next(
        e for e in events if e["type"] == "actauth:decision" and e["tool"] == "issue_refund"
    )
    assert decision["decision"] == "ask"
    assert decision["reason"] == "matched rule 'refund-production-needs-approval'"
    refund = next(e for e in events if e["type"] == "tool:result" and e["tool"] == "issue_refund")
    assert refund["statusText"] == "Denied."
    assert kinds[-2:] == ["loop:denied", "done"]
    assert events[-1]["stopReason"] == "denied"
    assert not any(e["type"] == "tool:started" and e["tool"] == "issue_refund" for e in events)


def test_a_deny_takes_its_reason_from_its_own_option(tmp_path: Path) -> None:
    # --deny is a switch: the message after it stays the message; --reason says why
    done = signoff(
        "run", "customer-service", "--json", "--deny", "--reason", "wrong order", REFUND,
        home=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = ndjson(done.stdout)
    refund = next(e for e in events if e["type"] == "tool:result" and e["tool"] == "issue_refund")
    assert (refund["statusText"], refund["detailText"]) == (
        "Denied.",
        "Denied by cli-flag (wrong order).",
    )
    alone = signoff("run", "customer-service", "--reason", "why", REFUND, home=tmp_path)
    assert alone.returncode == 2 and "give --deny too" in alone.stderr


def test_production_refund_approved_with_the_flag(tmp_path: Path) -> None:
    done = signoff("run", "customer-service", "--json", "--approve", REFUND, home=tmp_path)
    events = ndjson(done.stdout)
    refund = next(e for e in events if e["type"] == "tool:result" and e["tool"] == "issue_refund")
    assert refund["statusText"] == "Approved."


def test_ask_without_a_terminal_or_flag_is_a_usage_error_and_runs_nothing(tmp_path: Path) -> None:
    done = signoff("run", "customer-service", REFUND, home=tmp_path)
    assert done.returncode == 2
    assert "rerun with --approve or --deny" in done.stderr
    assert "issue_refund ran" not in done.stderr


def test_plain_mode_prints_the_answer_on_stdout_and_events_on_stderr(tmp_path: Path) -> None:
    done = signoff("run", "customer-service", "--env", "staging", REFUND, home=tmp_path)
    assert done.returncode == 0
    assert done.stdout.strip() == (
        "Refunded 42.0 USD for order A-1001 to the original payment method."
    )
    # allowed by a rule: said so, and never "Approved." (nobody approved it)
    assert "gate: issue_refund allowed (matched rule 'refund-staging-allowed')" in done.stderr
    assert "issue_refund ran: {" in done.stderr
    assert "Approved" not in done.stderr


def test_question_answered_with_the_flag_continues_the_session(tmp_path: Path) -> None:
    done = signoff(
        "run",
        "customer-service",
        "--json",
        "--env",
        "staging",
        "--answer",
        "A-1002",
        "--session",
        "s1",
        "I want my money back",
        home=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    events = ndjson(done.stdout)
    assert [e["type"] for e in events].count("question:pending") == 1
    assert events[-1]["text"] == "Refunded 58.5 USD for order A-1002."
    saved = json.loads((tmp_path / "sessions" / "s1.json").read_text())
    assert saved[0] == {"role": "user", "content": "I want my money back"}
    # the same session continues with the history
    again = signoff("run", "customer-service", "--json", "--session", "s1", "thanks", home=tmp_path)
    assert again.returncode == 0
    assert len(json.loads((tmp_path / "sessions" / "s1.json").read_text())) == len(saved) + 2


def test_unknown_agent_lists_the_agents(tmp_path: Path) -> None:
    done = signoff("run", "nobody", "hi", home=tmp_path)
    assert done.returncode == 2
    assert "unknown agent 'nobody'; agents: customer-service, daily-digest" in done.stderr


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    assert signoff("run", home=tmp_path).returncode == 2
    assert (
        signoff("run", "customer-service", "--approve", "--deny", "x", home=tmp_path).returncode
        == 2
    )
    bad = signoff("run", "customer-service", "--session", "../etc", "x", home=tmp_path)
    assert bad.returncode == 2 and "--session" in bad.stderr


def test_agents_and_config_commands(tmp_path: Path) -> None:
    listing = signoff("agents", home=tmp_path)
    assert listing.returncode == 0
    assert [line.split("\t")[0] for line in listing.stdout.splitlines()] == [
        "customer-service",
        "daily-digest",
    ]
    config = signoff("config", "customer-service", home=tmp_path, OPENAI_API_KEY="sk-secret-1")
    described = json.loads(config.stdout)
    assert described["rules"]["defaultDecision"] == "deny"
    assert "sk-secret-1" not in config.stdout


def test_invalid_agent_config_is_exit_1_naming_file_and_field(tmp_path: Path) -> None:
    agents = tmp_path / "agents" / "bad"
    agents.mkdir(parents=True)
    (agents / "agent.yaml").write_text("system: hi\nmaxTurns: -1\n")
    done = signoff("--agents", str(tmp_path / "agents"), "run", "bad", "hi", home=tmp_path)
    assert done.returncode == 1
    assert f"{agents / 'agent.yaml'}: maxTurns:" in done.stderr


@pytest.mark.parametrize("agent", ["daily-digest"])
def test_daily_digest_runs(tmp_path: Path, agent: str) -> None:
    done = signoff("run", agent, "--json", "Summarise today's orders.", home=tmp_path)
    events = ndjson(done.stdout)
    assert events[-1]["text"] == "Daily digest: 3 orders today, 120.4 USD in revenue."


# --- --json is the protocol's NDJSON stream: session first, one done or one error last ---

BROKEN_MODEL = """\
description: A model nobody answers for.
system: You are a test agent.
model:
  provider: openai
  model: gpt-test
  baseUrl: http://127.0.0.1:9/v1   # the discard port: nothing listens, every call fails
  apiKeyEnv: SIGNOFF_TEST_MODEL_KEY
"""


def test_json_run_whose_model_fails_ends_with_one_error_line_and_exits_1(tmp_path: Path) -> None:
    agent = tmp_path / "agents" / "broken"
    agent.mkdir(parents=True)
    (agent / "agent.yaml").write_text(BROKEN_MODEL)
    (agent / "actauth.yml").write_text("default_decision: allow\n")
    done = signoff(
        "--agents",
        str(tmp_path / "agents"),
        "run",
        "broken",
        "--json",
        "hi",
        home=tmp_path,
        SIGNOFF_TEST_MODEL_KEY="sk-test",
    )
    assert done.returncode == 1, done.stderr
    events = ndjson(done.stdout)
    kinds = [e["type"] for e in events]
    assert kinds == ["session", "budget:check", "error"]
    assert "ConnectError" in events[-1]["error"]
    assert "signoff: openai: request failed" in done.stderr


def test_json_ask_that_no_flag_answers_ends_with_an_error_line_and_exits_2(tmp_path: Path) -> None:
    done = signoff("run", "customer-service", "--json", REFUND, home=tmp_path)
    assert done.returncode == 2
    events = ndjson(done.stdout)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "session" and kinds[-2:] == ["approval:pending", "error"]
    assert "done" not in kinds
    assert "rerun with --approve or --deny" in events[-1]["error"]


def test_json_run_refused_before_the_turn_prints_no_event(tmp_path: Path) -> None:
    done = signoff("run", "nobody", "--json", "hi", home=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
