"""The shell blocks of README.md, bench/README.md and docs/**/*.md (the documentation
site's pages), and which of them a test runs.

A fenced ``sh``/``bash`` block is run by ``tests/functional/cli/test_doc_commands.py``
when the line before its fence is ``<!-- runnable -->`` (offline: the agents and
the template of a temporary copy of the project), and by
``tests/e2e/local_stack/test_doc_commands_local.py`` when it is ``<!-- runnable: local-stack -->``
(against a local stack; ``localhost:3000`` becomes the stack's address). Every other
block must be listed in ``NOT_RUNNABLE`` with the reason and what tests it instead,
so a new command in the docs is either run or explained.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

__all__ = ["NOT_RUNNABLE", "Block", "doc_blocks", "doc_pages", "project_copy", "run_block"]

_FENCE = re.compile(r"^\s*```(\w*)")
_MARK = re.compile(r"^<!-- runnable(?:: ([\w-]+))? -->$")
_SHELLS = ("sh", "bash", "shell")

# (file, the block's first command line) → why a test does not run it as written.
NOT_RUNNABLE: dict[tuple[str, str], str] = {
    (
        "docs/approval-policies.md",
        'curl -s "$API/inbox" -H "x-api-key: $KEY"   # pending items, oldest first',
    ): "needs a deployed stack's $API and $KEY, and a table for the CLI; the routes run on the "
    "handlers in tests/functional/approvals/test_inbox_routes.py and in a browser on the "
    "local stack in "
    "tests/browser/test_inbox_page.py, the commands in tests/functional/cli/test_inbox_cli.py",
    **{
        (page, "make demo"): "make itself: installs the project; `signoff demo`, which it runs, "
        "is tests/e2e/local_stack/test_local_stack.py's demo test, and `make test` is the test run"
        for page in ("README.md", "docs/getting-started.md")
    },
    **{
        (page, ". .venv/bin/activate"): "signoff dev serves until Ctrl-C; the stack it starts "
        "is every tests/e2e test's (tests/support/local_stack.py), `signoff demo` is "
        "tests/e2e/local_stack/test_local_stack.py's"
        for page in ("README.md", "docs/getting-started.md")
    },
    ("docs/getting-started.md", "sam build"): "needs Docker (sam local); documented, not tested "
    "(the page says so)",
    ("docs/deploying.md", "make deploy"): "deploys to an AWS account; tests/packaging builds "
    "the template",
    ("docs/deploying.md", "aws secretsmanager create-secret --name signoff/approvals-redis \\"): (
        "needs an AWS account and an ElastiCache endpoint; tests/packaging/"
        "test_channel_libraries.py stores the URL of a real redis-server as the channel's "
        "secret and runs the built notifier against it"
    ),
    (
        "docs/deploying.md",
        'psql "host=approvals.cluster-abc123.us-east-1.rds.amazonaws.com dbname=approvals '
        "user=admin sslmode=require\" <<'SQL'",
    ): (
        "needs an RDS database; tests/packaging/test_channel_libraries.py creates the same "
        "table (create_table_sql) in a real PostgreSQL and the built notifier inserts into it, "
        "tests/contract/channels/test_queue_channels.py inserts as a role granted INSERT only"
    ),
    ("docs/snapstart.md", "sam deploy --parameter-overrides EnableSnapStart=true"): (
        "deploys to an AWS account; "
        "tests/functional/template/test_snapstart_template.py runs SAM's "
        "transform with the parameter on and off, tests/packaging/test_snapstart_restore.py "
        "restores the built functions"
    ),
    ("docs/deploying.md", 'make deploy DEPLOY_ARGS="--parameter-overrides \\'): (
        "deploys to an AWS account; tests/functional/template/test_vpc_template.py transforms the "
        "template with these parameters and without them"
    ),
    ("docs/deploying.md", "API=$(aws cloudformation describe-stacks --stack-name signoff \\"): (
        "needs a deployed stack; the same routes are driven over the local stack by tests/e2e"
    ),
    ("docs/protocol.md", "API=$(aws cloudformation describe-stacks --stack-name signoff \\"): (
        "needs a deployed stack with the stream function; tests/e2e/"
        "test_stream_function_conformance.py runs the client with a stream URL of its own "
        "(the stream function's server beside the local stack's API), tests/e2e/"
        "test_send_local.py runs signoff send"
    ),
    (
        "docs/http-api.md",
        'signoff keys create --tenant acme-corp --label "support backend"   # prints the key once',
    ): "revokes an example key id; tests/functional/cli/test_keys_cli.py "
    "runs create, list and revoke against the table",
    (
        "docs/http-api.md",
        'curl -s -X POST "$API/agents/customer-service/messages" -H "x-api-key: $KEY" \\',
    ): "needs a deployed stack's $API and $KEY and a $PENDING_ID; the same calls "
    "run over the local stack in tests/e2e/local_stack/test_local_stack.py",
    (
        "docs/operations.md",
        "export SIGNOFF_TABLE=<SignoffTableName> SIGNOFF_BUCKET=<LargeValuesBucketName> \\",
    ): "placeholders for a deployed stack's outputs; tests/functional/cli/test_outbox_cli.py "
    "runs each outbox command",
    (
        "docs/rules.md",
        "export SIGNOFF_TABLE=<SignoffTableName>   "
        "# AWS credentials as usual; for `signoff dev`, its banner's exports",
    ): "a placeholder table and option syntax; tests/functional/cli/test_rules_replay_cli.py "
    "runs `signoff rules replay` against a table (moto server) holding recorded turns",
    (
        "docs/notifications.md",
        "signoff outbox list                      # unsent, waiting for a retry, failed for good",
    ): "needs a deployment's outbox and a pending id; "
    "tests/functional/cli/test_outbox_cli.py runs each command",
    (
        "docs/operations.md",
        "SIGNOFF_TABLE=$TABLE signoff migrate --dry-run   # what it would rewrite; writes nothing",
    ): "needs a deployed stack's table holding the previous release's items; "
    "tests/functional/cli/test_migrate_cli.py runs a dry run, a run, a second run and an "
    "interrupted run resumed, against a moto server holding tests/fixtures/store_v1_items.json",
    (
        "docs/migrating-from-loopengine.md",
        "signoff dev                                        "
        "# the local stack: HTTP API, notifier, sweeper",
    ): "signoff dev serves until Ctrl-C, make deploy needs AWS; see getting-started's and "
    "deploying's entries",
}


@dataclass(frozen=True)
class Block:
    file: str  # relative to the project root
    line: int  # the fence's line, 1-based
    mark: str | None  # None: not marked; "" offline; else the marker's kind
    text: str

    @property
    def first(self) -> str:
        """The first command line (comments skipped): what ``NOT_RUNNABLE`` is keyed by."""
        lines = [line.strip() for line in self.text.splitlines()]
        return next(line for line in lines if line and not line.startswith("#"))


def doc_pages() -> list[Path]:
    """The documentation: README.md, the benchmarks' bench/README.md (the site's
    Benchmarks page includes it), and every page of the site under docs/, sub-folders too."""
    return [
        ROOT / "README.md",
        ROOT / "bench" / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
    ]


def doc_blocks() -> list[Block]:
    """Every shell block of the documentation, in file order."""
    found = []
    for path in doc_pages():
        lines = path.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            fence = _FENCE.match(lines[index])
            if not fence:
                index += 1
                continue
            end = next(i for i in range(index + 1, len(lines)) if _FENCE.match(lines[i]))
            if fence.group(1) in _SHELLS:
                before = lines[index - 1].strip() if index else ""
                marked = _MARK.match(before)
                indent = len(lines[index]) - len(lines[index].lstrip())
                body = "\n".join(line[indent:] for line in lines[index + 1 : end])
                found.append(
                    Block(
                        file=str(path.relative_to(ROOT)),
                        line=index + 1,
                        mark=(marked.group(1) or "") if marked else None,
                        text=body + "\n",
                    )
                )
            index = end + 1
    return found


def project_copy(tmp: Path) -> Path:
    """What a fresh clone gives the commands: the agents, the template, the import graph's
    script, the virtualenv."""
    import shutil

    copy = tmp / "project"
    shutil.copytree(ROOT / "agents", copy / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "template.yaml", copy / "template.yaml")
    # The import graph's figures (docs/architecture.md): the script alone, it reads the
    # installed packages.
    (copy / "dev").mkdir()
    shutil.copy(ROOT / "dev" / "import_graph.py", copy / "dev" / "import_graph.py")
    # The virtualenv running these tests, whatever its name (`make test VENV=…`, as CI
    # names one per Python): the docs say `.venv`, the default.
    (copy / ".venv").symlink_to(Path(sys.prefix))
    return copy


def run_block(
    block: Block, env: dict[str, str], *, cwd: Path | None = None, text: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs ``block`` (or ``text``, the block as a test rewrote it) with ``bash -e -o pipefail``
    in ``cwd`` with exactly ``env``; asserts it succeeded, naming the block and its output."""
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.text if text is None else text],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{block.file}:{block.line}\n{done.stdout}\n{done.stderr}"
    return done
