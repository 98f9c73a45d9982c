"""One architecture drives the build and the deploy: the built template allows no other.

``make build ARCH=…`` passes ``ARCH`` to ``sam build`` and pins the built template's
``Architecture`` parameter to it (``dev/pin_architecture.py``); ``sam deploy``
deploys that built template, so answering the other architecture is refused.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import TYPE_CHECKING

import yaml

from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = ROOT / "dev" / "pin_architecture.py"
BUILT = """\
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Architecture:
    Type: String
    Default: x86_64
    AllowedValues:
    - arm64
    - x86_64
Resources:
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Architectures:
      - Ref: Architecture
"""


def test_the_built_template_allows_only_the_architecture_it_was_built_for(
    tmp_path: Path,
) -> None:
    built = tmp_path / "template.yaml"
    built.write_text(BUILT)

    subprocess.run([sys.executable, str(SCRIPT), str(built), "arm64"], check=True)

    template = yaml.safe_load(built.read_text())
    parameter = template["Parameters"]["Architecture"]
    assert parameter["Default"] == "arm64"
    assert parameter["AllowedValues"] == ["arm64"]
    assert template["AWSTemplateFormatVersion"] == "2010-09-09"
    assert template["Resources"]["Fn"]["Properties"]["Architectures"] == [{"Ref": "Architecture"}]


def test_an_unknown_architecture_is_refused(tmp_path: Path) -> None:
    built = tmp_path / "template.yaml"
    built.write_text(BUILT)
    run = subprocess.run(
        [sys.executable, str(SCRIPT), str(built), "amd64"], capture_output=True, text=True
    )
    assert run.returncode != 0 and "ARCH must be one of" in run.stderr
    assert built.read_text() == BUILT


def test_make_builds_for_arch_and_pins_the_built_template_to_it() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^ARCH \?= x86_64$", makefile, re.MULTILINE)
    build = re.search(r"\$\(SAM\) build .*", makefile)
    assert build is not None and "--parameter-overrides Architecture=$(ARCH)" in build.group()
    assert "dev/pin_architecture.py .aws-sam/build/template.yaml $(ARCH)" in makefile
