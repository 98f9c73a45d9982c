"""Every command in README.md, bench/README.md and the docs site's pages (docs/**) is run
by a test (issue 11): the blocks marked ``<!-- runnable -->`` run here, each in a fresh
copy of the project, offline; the others are run over the local stack
(``tests/e2e/local_stack/test_doc_commands_local.py``) or listed in
``tests/support/doc_commands.NOT_RUNNABLE`` with the reason and the test that covers
what they do."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from tests.support.doc_commands import NOT_RUNNABLE, doc_blocks, project_copy, run_block

if TYPE_CHECKING:
    from pathlib import Path

OFFLINE = [block for block in doc_blocks() if block.mark == ""]


def test_every_shell_block_is_run_or_says_why_not() -> None:
    blocks = doc_blocks()
    unexplained = [
        f"{b.file}:{b.line}: {b.first}"
        for b in blocks
        if b.mark is None and (b.file, b.first) not in NOT_RUNNABLE
    ]
    assert unexplained == [], "mark each <!-- runnable --> or list it in NOT_RUNNABLE"
    unmarked = {(b.file, b.first) for b in blocks if b.mark is None}
    assert sorted(set(NOT_RUNNABLE) - unmarked) == []  # no stale entry
    assert {b.mark for b in blocks} <= {None, "", "local-stack"}
    assert OFFLINE, "the offline blocks are found"


@pytest.mark.parametrize("block", OFFLINE, ids=[f"{b.file}:{b.line}" for b in OFFLINE])
def test_an_offline_block_runs_as_written(tmp_path: Path, block: object) -> None:
    from tests.support.doc_commands import Block

    assert isinstance(block, Block)
    project = project_copy(tmp_path)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SIGNOFF_AGENTS_DIR", "SIGNOFF_MODEL", "VIRTUAL_ENV", "NO_COLOR")
    }
    env["SIGNOFF_HOME"] = str(tmp_path / "home")
    env["PATH"] = f"{project / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    run_block(block, env, cwd=project)
