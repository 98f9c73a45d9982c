"""Pins the built template's Architecture parameter to the one the build used.

``make build`` runs ``sam build`` for ``ARCH`` (the engine layer's compiled wheels
are fetched for it), then this: the built template (``.aws-sam/build/template.yaml``,
the one ``sam deploy`` deploys) gets ``ARCH`` as the parameter's default and only
allowed value. A deploy asking for the other architecture (``sam deploy --guided``
answered with arm64 after an x86_64 build) is then refused by CloudFormation,
instead of deploying functions that fail at their first import.

Usage: python dev/pin_architecture.py .aws-sam/build/template.yaml x86_64
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ARCHITECTURES = ("x86_64", "arm64")


def pin(path: Path, architecture: str) -> None:
    if architecture not in ARCHITECTURES:
        raise SystemExit(f"ARCH must be one of {', '.join(ARCHITECTURES)}, not {architecture!r}")
    # sam build writes the long form (Ref:, Fn::If:): plain YAML, no tags.
    template = yaml.safe_load(path.read_text(encoding="utf-8"))
    parameter = template["Parameters"]["Architecture"]
    parameter["Default"] = architecture
    parameter["AllowedValues"] = [architecture]
    parameter["Description"] = (
        f"Built for {architecture} (make build ARCH={architecture}); to deploy the other "
        "architecture, build for it."
    )
    path.write_text(yaml.safe_dump(template, sort_keys=False), encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    pin(Path(sys.argv[1]), sys.argv[2])
