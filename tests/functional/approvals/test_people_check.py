"""``signoff check`` as ``make build`` runs it, on a rule whose ``from`` names someone
people.yaml does not know: exit 1, naming the agent, the rules file and the field."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import yaml

from tests.conftest import ROOT
from tests.support.cli import signoff_cli as check

if TYPE_CHECKING:
    from pathlib import Path

RULE = "refund-production-needs-approval"


def test_a_from_naming_nobody_known_fails_the_check(tmp_path: Path) -> None:
    root = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "people.yaml").write_text(
        yaml.safe_dump({"people": {"alice": {"slack": "U0ALICE"}, "bob": {"slack": "U0BOB"}}})
    )
    rules_file = root / "customer-service" / "actauth.yml"
    rules = yaml.safe_load(rules_file.read_text())
    [rule] = [r for r in rules["rules"] if r.get("name") == RULE]
    rule.update({"approvals": 2, "from": ["alice", "zoe"]})
    rules_file.write_text(yaml.safe_dump(rules))

    done = check("check", "--agents", str(root))

    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"signoff check: customer-service: {rules_file}")
    assert f"rules.{RULE}.from: no person or group named zoe in people.yaml" in first

    rule["from"] = ["alice", "bob"]
    rules_file.write_text(yaml.safe_dump(rules))
    assert check("check", "--agents", str(root)).returncode == 0
