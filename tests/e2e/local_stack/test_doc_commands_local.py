"""The documentation's commands that talk to ``signoff dev`` (``<!-- runnable: local-stack -->``),
run as written against a local stack: ``localhost:3000`` is the stack's address here, as
the port is a free one (tests/support/doc_commands.py)."""

from __future__ import annotations

import os
import re

import pytest

from signoff_dev.local.stack import LocalStack  # noqa: TC001 - a fixture's annotation
from tests.support.doc_commands import Block, doc_blocks, run_block
from tests.support.local_stack import stack as stack

LOCAL = [block for block in doc_blocks() if block.mark == "local-stack"]
_ADDRESS = re.compile(r"\b(?:localhost|127\.0\.0\.1):3000\b")


def test_the_local_stack_blocks_are_found() -> None:
    assert [b.file for b in LOCAL] == [
        "docs/clients.md",
        "docs/getting-started.md",
        "docs/protocol.md",
    ]


@pytest.mark.parametrize("block", LOCAL, ids=[f"{b.file}:{b.line}" for b in LOCAL])
def test_a_local_stack_block_runs_as_written(stack: LocalStack, block: Block) -> None:
    text = _ADDRESS.sub(stack.url.removeprefix("http://"), block.text)
    env = {k: v for k, v in os.environ.items() if k != "SIGNOFF_AGENTS_DIR"}
    done = run_block(block, env, text=text)
    # the stack answered the documented request, not an error page
    assert '"error"' not in done.stdout, done.stdout
    assert ('"pending": true' in done.stdout.replace('"pending":true', '"pending": true')) or (
        "event: done" in done.stdout
    ), done.stdout
