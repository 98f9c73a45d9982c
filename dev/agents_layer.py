"""Builds the agents layer with the parse of its YAML: ``make build`` runs it after sam build.

The template's AgentsLayer is the ``agents/`` folder as it is (no build step), so sam
build leaves it where it is. This copies it into the build
(``.aws-sam/build/AgentsLayer``), writes there the snapshot a deployed cold start
reads instead of parsing YAML (``signoff.yamldocs``: each document keyed by the hash
of its text, so an edited file is parsed, never served stale), and points the built
template's AgentsLayer at the copy: what ``sam deploy`` zips. The sources stay as
they are, and ``signoff dev`` / ``signoff run`` parse the YAML.

Usage: python dev/agents_layer.py .aws-sam/build agents
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import yaml

from signoff.agents.snapshot import write_yaml_snapshot

# The agents' tools.py are imported to load them: no __pycache__ of this Python in the layer.
sys.dont_write_bytecode = True

LAYER = "AgentsLayer"


def build(build_dir: Path, agents: Path) -> int:
    target = build_dir / LAYER
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(agents, target, ignore=shutil.ignore_patterns("__pycache__"))
    count = write_yaml_snapshot(target)
    template_file = build_dir / "template.yaml"
    # sam build writes the long form (Ref:, Fn::If:): plain YAML, no tags.
    template = yaml.safe_load(template_file.read_text(encoding="utf-8"))
    template["Resources"][LAYER]["Properties"]["ContentUri"] = LAYER
    template_file.write_text(yaml.safe_dump(template, sort_keys=False), encoding="utf-8")
    return count


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    parsed = build(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{LAYER}: {sys.argv[2]} with the parse of {parsed} YAML documents")
