"""``dev/venv.sh``, the Makefile's virtualenvs: checked Python, remade when a wrong one built it."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = ROOT / "dev" / "venv.sh"


def run(python: str, venv: Path) -> subprocess.CompletedProcess[str]:
    # `pip` is already in every new virtualenv: pip has nothing to fetch, so the
    # test needs no package index.
    return subprocess.run(
        [str(SCRIPT), python, str(venv), "a test", "pip"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_a_too_old_python_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    old = tmp_path / "python3.10"
    old.write_text("#!/bin/sh\n[ \"$1\" = --version ] && echo 'Python 3.10.13'\nexit 1\n")
    old.chmod(0o755)

    done = run(str(old), tmp_path / "venv")

    assert done.returncode == 1
    assert "signoff needs Python >= 3.11" in done.stderr
    assert "Python 3.10.13" in done.stderr and "PYTHON=python3.11" in done.stderr
    assert not (tmp_path / "venv").exists()


def test_a_virtualenv_left_by_a_python_that_is_gone_is_made_again(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    os.symlink(tmp_path / "gone" / "python3.10", venv / "bin" / "python")

    done = run(sys.executable, venv)

    assert done.returncode == 0, done.stderr
    assert "was made by a Python that no longer runs; making it again" in done.stdout
    assert "== installing a test into" in done.stdout
    check = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert check.stdout.strip() == str(tuple(sys.version_info[:2]))


def test_make_deploy_runs_the_pinned_sam_guided_the_first_time() -> None:
    done = subprocess.run(
        ["make", "-n", "deploy", "SAM_VENV=.venv-sam"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert ".venv-sam/bin/sam deploy --guided" in done.stdout
