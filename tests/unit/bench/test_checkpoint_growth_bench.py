"""bench/checkpoint_growth.py's resume figure: each fresh process prints its own median."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench import checkpoint_growth

SCRIPT = Path(checkpoint_growth.__file__)


def test_a_fresh_process_resumes_the_paused_turn_and_prints_its_median() -> None:
    # resume_time_in_memory asserts the resumed turn finished, so a figure is a real resume
    (figure,) = checkpoint_growth.resume_ms_in_fresh_processes(1)
    assert 0 < figure < 10_000


def test_no_process_to_resume_in_is_refused_by_name() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--processes", "0"], capture_output=True, text=True
    )
    assert run.returncode == 2
    assert "--processes must be at least 1" in run.stderr
    assert run.stdout == ""
