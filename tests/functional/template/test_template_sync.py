"""``agent.yaml``'s ``schedule`` is the one source of the template's schedule events (issue 13).

``signoff template sync`` rewrites the template's marked block from every agent's
schedule; ``signoff check`` (which ``make template`` runs before a build or a test)
fails when the template's schedule events differ from the agents', naming the agent
and the difference.
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

from signoff.agents import AgentCatalog
from signoff_dev.local.template import Tag, load_template
from tests.conftest import ROOT
from tests.functional.cli.test_check_cli import check

if TYPE_CHECKING:
    from pathlib import Path

SYNC = "run `signoff template sync`"


def project(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the sample agents with the template beside them, as in the repository."""
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents, ignore=shutil.ignore_patterns("__pycache__"))
    template = tmp_path / "template.yaml"
    shutil.copy(ROOT / "template.yaml", template)
    return agents, template


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def events(template: Path) -> dict[str, dict[str, object]]:
    function = load_template(template)["Resources"]["MessageFunction"]["Properties"]
    found: dict[str, dict[str, object]] = function["Events"]
    return found


def test_the_repositorys_template_is_in_step_with_its_agents() -> None:
    from signoff_dev.cli.template import schedule_drift

    catalog = AgentCatalog(ROOT / "agents")
    assert schedule_drift(ROOT / "template.yaml", catalog, skip=set()) == []


def test_a_drifted_schedule_fails_check_naming_the_agent_and_the_difference(
    tmp_path: Path,
) -> None:
    agents, template = project(tmp_path)
    edit(template, "Schedule: cron(0 18 * * ? *)", "Schedule: cron(0 6 * * ? *)")

    done = check("check", "--agents", str(agents))

    assert done.returncode == 1
    assert (
        f"signoff check: daily-digest: {template}: expression 'cron(0 18 * * ? *)' in "
        f"agent.yaml, 'cron(0 6 * * ? *)' in the template's DailyDigestSchedule; {SYNC}"
    ) in done.stderr.splitlines()


def test_a_message_tenant_or_condition_changed_in_agent_yaml_fails_check(tmp_path: Path) -> None:
    agents, _ = project(tmp_path)
    digest = agents / "daily-digest" / "agent.yaml"
    edit(digest, "message: Summarise today's orders.", "message: Summarise the week.")
    edit(digest, "tenant: default", "tenant: acme-corp")
    edit(digest, "  condition: SampleSchedulesEnabled\n", "")

    done = check("check", "--agents", str(agents))

    assert done.returncode == 1
    drift = [line for line in done.stderr.splitlines() if "daily-digest" in line]
    assert len(drift) == 3
    assert "message 'Summarise the week.' in agent.yaml, \"Summarise today's orders.\"" in drift[0]
    assert "tenant 'acme-corp' in agent.yaml, 'default'" in drift[1]
    assert "condition None in agent.yaml, 'SampleSchedulesEnabled'" in drift[2]


def test_a_schedule_missing_on_either_side_fails_check(tmp_path: Path) -> None:
    agents, _ = project(tmp_path)
    service = agents / "customer-service" / "agent.yaml"
    service.write_text(
        service.read_text(encoding="utf-8")
        + "schedule: {expression: rate(1 day), message: 'Any refunds waiting?'}\n",
        encoding="utf-8",
    )
    digest = agents / "daily-digest" / "agent.yaml"
    text = digest.read_text(encoding="utf-8")
    digest.write_text(text[: text.index("schedule:")], encoding="utf-8")

    done = check("check", "--agents", str(agents))

    assert done.returncode == 1
    assert f"customer-service: {tmp_path / 'template.yaml'}: agent.yaml has a schedule" in (
        done.stderr
    )
    assert "daily-digest" in done.stderr and "its agent.yaml has no schedule" in done.stderr


def test_sync_writes_the_agents_schedules_and_check_then_passes(tmp_path: Path) -> None:
    agents, template = project(tmp_path)
    service = agents / "customer-service" / "agent.yaml"
    service.write_text(
        service.read_text(encoding="utf-8")
        + "schedule: {expression: rate(1 day), message: 'Any refunds waiting?',"
        " tenant: acme-corp}\n",
        encoding="utf-8",
    )
    edit(template, "Schedule: cron(0 18 * * ? *)", "Schedule: cron(0 6 * * ? *)")

    synced = check("template", "sync", "--agents", str(agents), "--template", str(template))

    assert synced.returncode == 0, synced.stderr
    assert "updated: 2 agent schedule(s): customer-service, daily-digest" in synced.stdout
    found = events(template)
    assert found["CustomerServiceSchedule"] == {
        "Type": "Schedule",
        "Properties": {
            "Description": "The customer-service agent's run (agents/customer-service/agent.yaml).",
            "Schedule": "rate(1 day)",
            "State": "ENABLED",
            "Input": json.dumps(
                {
                    "agent": "customer-service",
                    "message": "Any refunds waiting?",
                    "tenant": "acme-corp",
                }
            ),
        },
    }
    digest = found["DailyDigestSchedule"]["Properties"]
    assert isinstance(digest, dict) and digest["Schedule"] == "cron(0 18 * * ? *)"
    assert digest["State"] == Tag("If", ["SampleSchedulesEnabled", "ENABLED", "DISABLED"])
    assert "PostMessage" in found  # the rest of the template is untouched
    assert check("check", "--agents", str(agents)).returncode == 0
    again = check("template", "sync", "--agents", str(agents), "--template", str(template))
    assert "already in step" in again.stdout


def test_a_hand_edit_inside_the_generated_block_fails_check(tmp_path: Path) -> None:
    agents, template = project(tmp_path)
    edit(template, "Description: The daily-digest agent's run", "Description: Nightly digest")

    done = check("check", "--agents", str(agents))

    assert done.returncode == 1
    assert "edited by hand" in done.stderr


def test_a_template_without_the_marked_block_fails_check(tmp_path: Path) -> None:
    from signoff_dev.cli.template import BEGIN, END

    agents, template = project(tmp_path)
    lines = template.read_text(encoding="utf-8").splitlines(keepends=True)
    template.write_text(
        "".join(line for line in lines if BEGIN not in line and END not in line),
        encoding="utf-8",
    )

    done = check("check", "--agents", str(agents))

    assert done.returncode == 1
    assert f"signoff check: template: {template}: " in done.stderr
    assert BEGIN in done.stderr
    # the event itself is still there: a schedule outside the generated block is drift too
    assert "DailyDigestSchedule" in events(template)
