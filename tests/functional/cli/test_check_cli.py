"""``signoff check`` as ``make build`` runs it: a real subprocess over an agents folder.

A bad ``notify`` name or a YAML error fails the command (and so the build) with
the agent, the file and the field; the sample agents pass.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from tests.conftest import ROOT
from tests.support.cli import signoff_cli as check

if TYPE_CHECKING:
    from pathlib import Path


def agents_copy(tmp_path: Path) -> Path:
    root = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_the_sample_agents_pass_with_one_summary_line() -> None:
    done = check("check")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "signoff check: 2 agents OK under agents (customer-service, daily-digest), 2 channels"
    ]
    assert done.stderr == ""


def test_a_notify_name_that_is_no_channel_fails_naming_agent_file_and_field(
    tmp_path: Path,
) -> None:
    root = agents_copy(tmp_path)
    config = root / "customer-service" / "agent.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("local-email:", "local-emial:"),
        encoding="utf-8",
    )
    done = check("check", "--agents", str(root))
    assert done.returncode == 1
    assert done.stdout == ""
    first, summary = done.stderr.splitlines()
    # file:line, as a compiler says it: the line of the misspelled key
    assert first.startswith(f"signoff check: customer-service: {config}:16: notify.local-emial: ")
    assert "no channel named 'local-emial' in channels.yaml" in first
    assert summary == f"signoff check: 1 problem(s), 1 of 2 agents misconfigured under {root}"


def test_a_channel_named_escalation_fails_naming_the_file_and_line(tmp_path: Path) -> None:
    root = agents_copy(tmp_path)
    channels = root / "channels.yaml"
    text = channels.read_text(encoding="utf-8").replace("  local-email:", "  escalation:")
    channels.write_text(text, encoding="utf-8")
    line = text.splitlines().index("  escalation:") + 1

    done = check("check", "--agents", str(root))

    assert done.returncode == 1
    first, summary = done.stderr.splitlines()
    assert first.startswith(
        f"signoff check: channels: {channels}:{line}: channels.escalation: "
        "'escalation' is reserved: "
    )
    assert first.endswith(f"rename the channel (line {line}, column 3)")
    assert summary.startswith("signoff check: 1 problem(s)")


def test_a_yaml_error_fails_naming_the_file(tmp_path: Path) -> None:
    root = agents_copy(tmp_path)
    config = root / "daily-digest" / "agent.yaml"
    config.write_text("description: [unclosed\n", encoding="utf-8")
    done = check("--agents", str(root), "check")  # the top-level option works too
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"signoff check: daily-digest: {config}:2: invalid YAML: ")
    assert lines[-1].startswith("signoff check: 1 problem(s), 1 of 2 agents")


def test_a_field_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    root = agents_copy(tmp_path)
    config = root / "customer-service" / "agent.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace(
            "  local-email: [approval, question]", "  local-email: [approval, sometimes]"
        ),
        encoding="utf-8",
    )
    done = check("check", "--agents", str(root))
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"signoff check: customer-service: {config}:16: notify.local-email.1: "
    )


def test_more_than_the_cold_start_checks_a_tools_file_that_does_not_import(
    tmp_path: Path,
) -> None:
    root = agents_copy(tmp_path)
    tools = root / "daily-digest" / "tools.py"
    tools.write_text("import no_such_module_here\n", encoding="utf-8")
    done = check("check", "--agents", str(root))
    assert done.returncode == 1
    assert done.stderr.startswith(f"signoff check: daily-digest: {tools}: import failed: ")


def test_an_invalid_channels_file_is_reported_once(tmp_path: Path) -> None:
    root = agents_copy(tmp_path)
    (root / "channels.yaml").write_text("channels: {x: {type: nope}}\n", encoding="utf-8")
    done = check("check", "--agents", str(root))
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"signoff check: channels: {root / 'channels.yaml'}:1: channels.x")


def with_database_channel(root: Path) -> None:
    channels = root / "channels.yaml"
    channels.write_text(
        channels.read_text(encoding="utf-8")
        + "  approvals-db:\n    type: database\n    dsn: {secret: database-dsn}\n",
        encoding="utf-8",
    )


def test_a_channel_whose_library_the_layer_lacks_fails_saying_what_to_add(
    tmp_path: Path,
) -> None:
    # Given a database channel and the engine layer's requirements (no psycopg)
    root = agents_copy(tmp_path)
    with_database_channel(root)
    layer = ROOT / "layers" / "signoff" / "requirements.txt"
    # When the build checks the agents against the layer
    done = check("check", "--agents", str(root), "--layer-requirements", str(layer))
    # Then it fails naming the channel, the library as pyproject's extra declares it, the file
    assert done.returncode == 1, done.stdout
    first = done.stderr.splitlines()[0]
    assert first.startswith("signoff check: channel approvals-db: type database needs psycopg")
    assert f"add it to {layer}" in first
    # And with the library listed in the layer it passes
    listed = tmp_path / "requirements.txt"
    listed.write_text(layer.read_text(encoding="utf-8") + "psycopg[binary]>=3.1\n")
    done = check("check", "--agents", str(root), "--layer-requirements", str(listed))
    assert done.returncode == 0, done.stderr
    # And without the option (a local check) the channel is no problem
    assert check("check", "--agents", str(root)).returncode == 0


def test_no_agents_at_all_fails(tmp_path: Path) -> None:
    done = check("check", "--agents", str(tmp_path))
    assert done.returncode == 1
    assert "no agents under" in done.stderr


def test_make_build_and_make_test_run_the_check_before_anything_else() -> None:
    # `build` and `packaging` (which `test` needs) both depend on `template`;
    # its recipe's first line is the check, so a bad agent stops the build first;
    # --strict: a rule naming a tool its agent lacks (a warning elsewhere) stops it too.
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntemplate:", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert recipe[0].strip() == (
        "$(BIN)/signoff check --strict --agents agents "
        "--layer-requirements layers/signoff/requirements.txt "
        "--layer-requirements layers/signoff/requirements-channels.txt"
    )
    assert "\nbuild: template\n" in makefile
    assert "\npackaging: template " in makefile
    assert "\ntest: lint docs packaging client-test\n" in makefile


def test_rules_actauth_accepts_pass_with_warnings_and_ambiguous_ones_fail(
    tmp_path: Path,
) -> None:
    # Given rules actauth 0.0.4 accepts but signoff would not write (no name, an extra
    # key), then the check passes and warns; given a tenant/environment scope actauth
    # would stretch over the agent, then it fails saying what actauth would have done.
    root = agents_copy(tmp_path)
    rules = root / "daily-digest" / "actauth.yml"
    rules.write_text(
        "rules:\n  - {scope: '*/*', tool: list_orders, decision: allow, description: reads only}\n",
        encoding="utf-8",
    )
    done = check("check", "--agents", str(root))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"signoff check: warning: daily-digest: {rules}:2: rules[0]: no name; its reason "
        "reads matched rule '*/*'",
        f"signoff check: warning: daily-digest: {rules}:2: rules[0].description: unknown key, "
        "ignored",
    ]

    rules.write_text(
        "rules:\n  - {name: prod, scope: '*/production', tool: list_orders, decision: allow}\n",
        encoding="utf-8",
    )
    done = check("check", "--agents", str(root))
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        f"signoff check: daily-digest: {rules}:2: rules[0] 'prod'.scope: '*/production' reads "
        "as tenant/environment, but actauth 0.0.4 matches a scope against "
        "'tenant/environment/agent' as one glob, where it applies only to an agent named "
        "'production', never to 'daily-digest'; write '*/production/*' for that tenant and "
        "environment under every agent"
    )


def test_an_escalation_step_past_the_approval_timeout_is_a_warning(tmp_path: Path) -> None:
    # Given a ladder whose last step comes after approvalTimeout (the item expires
    # first), then the check passes and warns which step is never reached.
    root = agents_copy(tmp_path)
    config = root / "customer-service" / "agent.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("approvalTimeout: 24h", "approvalTimeout: 4h")
        + "escalate:\n  - {after: 1h, notify: local-webhook}\n  - {after: 6h, then: deny}\n",
        encoding="utf-8",
    )
    done = check("check", "--agents", str(root))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"signoff check: warning: customer-service: {config}: escalate: step 2 (after 6h) "
        "comes after approvalTimeout (4h): the item expires first, so it is never reached"
    ]
