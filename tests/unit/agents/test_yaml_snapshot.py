"""The build-time parse of the agents' YAML (``signoff.yamldocs``, ``dev/agents_layer.py``).

A deployed cold start reads ``yaml-snapshot.json`` instead of importing PyYAML and
parsing: these tests load the agents with PyYAML made unimportable, so a document the
snapshot lacks fails loudly. A stale snapshot must never be used: an edited file is
parsed from its text. What the functions load is the same either way.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from signoff import yamldocs
from signoff.agents import AgentCatalog
from signoff.agents.snapshot import write_yaml_snapshot
from signoff.aws.turns import checked_agents
from signoff.channels.http_notifier import deployment_channels
from signoff.models.scripted import ScriptedModel
from signoff.settings import Deployment

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[3]
AGENTS = ROOT / "agents"


@pytest.fixture(autouse=True)
def _no_snapshot() -> Iterator[None]:
    yamldocs.forget_snapshot()
    yield
    yamldocs.forget_snapshot()


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    """A copy of the shipped agents folder, with its snapshot written as ``make build`` does."""
    root = tmp_path / "agents"
    shutil.copytree(AGENTS, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _without_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import yaml`` fails from here on: every parse must come from the snapshot."""
    monkeypatch.setitem(sys.modules, "yaml", None)


def _loaded(root: Path) -> dict[str, Any]:
    """What the functions get from the agents folder: every agent, the channels, the scripts."""
    catalog = AgentCatalog(root)
    assert catalog.problems() == {}
    found: dict[str, Any] = {"channels": catalog.channels, "deployed": deployment_channels(root)}
    for name in catalog.names():
        agent = catalog.get(name)
        found[name] = (
            agent.config,
            agent.rules,
            agent.skills,
            agent.warnings,
            ScriptedModel.from_config(agent.config.model, agent.directory)._respond,
        )
    return found


def test_the_snapshot_holds_every_document_a_cold_start_parses(
    agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from_yaml = _loaded(agents)
    # channels.yaml, each agent.yaml and actauth.yml, a skill's frontmatter, each script
    assert write_yaml_snapshot(agents) == 8
    assert yamldocs.use_snapshot(agents / yamldocs.SNAPSHOT_FILE) == 8
    _without_pyyaml(monkeypatch)

    assert _loaded(agents) == from_yaml


def test_an_edited_file_is_parsed_from_its_text_and_the_others_come_from_the_snapshot(
    agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_yaml_snapshot(agents)
    agent_file = agents / "customer-service" / "agent.yaml"
    agent_file.write_text(_edit_description(agent_file.read_text()), encoding="utf-8")
    assert yamldocs.use_snapshot(agents / yamldocs.SNAPSHOT_FILE) == 8
    parsed: list[str] = []
    real = yaml.safe_load
    monkeypatch.setattr(yaml, "safe_load", lambda text: parsed.append(text) or real(text))

    catalog = AgentCatalog(agents)
    assert catalog.problems() == {}

    assert catalog.get("customer-service").config.description == "Edited after the build."
    assert set(parsed) == {agent_file.read_text()}  # the edited file, and only it


def _edit_description(text: str) -> str:
    lines = [
        "description: Edited after the build." if line.startswith("description:") else line
        for line in text.splitlines()
    ]
    return "\n".join(lines) + "\n"


def test_a_snapshot_of_other_files_is_never_used(
    agents: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    shutil.copytree(agents, other)
    (other / "daily-digest" / "agent.yaml").write_text(
        "description: Another agent.\nsystem: Something else.\n", encoding="utf-8"
    )
    write_yaml_snapshot(other)
    assert yamldocs.use_snapshot(other / yamldocs.SNAPSHOT_FILE) == 8
    _without_pyyaml(monkeypatch)

    # daily-digest's agent.yaml is not the one the snapshot parsed: it needs PyYAML
    with pytest.raises(ImportError):
        AgentCatalog(agents).get("daily-digest")


def test_a_parse_json_cannot_carry_exactly_is_left_out_and_parsed_again() -> None:
    texts = ["when: 2026-12-01\n", "1: one\n", "tags: !!set {a: null}\n", "plain: [1, 2.5, true]\n"]
    with yamldocs.recording() as parsed:
        for text in texts:
            yamldocs.safe_load(text)

    # the date, the integer key and the set stay YAML's to parse
    assert [json.loads(value) for value in parsed.values()] == [{"plain": [1, 2.5, True]}]


def test_a_missing_or_malformed_snapshot_installs_nothing(tmp_path: Path) -> None:
    file = tmp_path / yamldocs.SNAPSHOT_FILE
    assert yamldocs.use_snapshot(file) == 0
    for text in ("not json", "[]", json.dumps({"version": 99, "parsed": {"safe:x": "1"}})):
        file.write_text(text, encoding="utf-8")
        assert yamldocs.use_snapshot(file) == 0


def test_each_lookup_gives_its_own_copy(agents: Path) -> None:
    write_yaml_snapshot(agents)
    yamldocs.use_snapshot(agents / yamldocs.SNAPSHOT_FILE)
    text = (agents / "channels.yaml").read_text()

    first = yamldocs.safe_load(text)
    first["channels"].clear()

    assert yamldocs.safe_load(text) == yaml.safe_load(text)


def test_the_deployed_functions_read_the_snapshot_beside_the_agents(
    agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_yaml_snapshot(agents)
    deployment = Deployment.from_env({"SIGNOFF_AGENTS_DIR": str(agents)})
    _without_pyyaml(monkeypatch)

    catalog = checked_agents(deployment)  # what message, resolve and sweeper call

    assert catalog.problems() == {}
    assert set(catalog.channels.channels) == {"local-webhook", "local-email"}


def test_the_build_puts_the_agents_and_their_snapshot_in_the_built_template(
    tmp_path: Path,
) -> None:
    build = tmp_path / "build"
    build.mkdir()
    template = {
        "Resources": {
            "AgentsLayer": {
                "Type": "AWS::Serverless::LayerVersion",
                "Properties": {"ContentUri": "../../agents"},
            }
        }
    }
    (build / "template.yaml").write_text(yaml.safe_dump(template), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("agents_layer", ROOT / "dev" / "agents_layer.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    assert module.build(build, AGENTS) == 8

    built = yaml.safe_load((build / "template.yaml").read_text())
    assert built["Resources"]["AgentsLayer"]["Properties"]["ContentUri"] == "AgentsLayer"
    layer = build / "AgentsLayer"
    assert (layer / "customer-service" / "agent.yaml").read_bytes() == (
        AGENTS / "customer-service" / "agent.yaml"
    ).read_bytes()
    assert yamldocs.use_snapshot(layer / yamldocs.SNAPSHOT_FILE) == 8
    assert not list(layer.rglob("__pycache__"))
    assert not (AGENTS / yamldocs.SNAPSHOT_FILE).exists()  # the sources stay as they are


def test_make_build_writes_the_agents_layer_before_compiling_the_build() -> None:
    makefile = (ROOT / "Makefile").read_text()
    step = "dev/agents_layer.py .aws-sam/build agents"
    assert step in makefile
    assert makefile.index(step) < makefile.index("-m compileall")
