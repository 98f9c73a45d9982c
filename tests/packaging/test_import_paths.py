"""Each built function's import path: the ``signoff`` modules its cold start loads.

For every function of ``template.yaml`` a fresh process of ``.venv-lambda``'s
python3.13 (the runtime's boto3 only) imports the function's handler module from
``.aws-sam/build`` as Lambda does — ``sys.path`` the function's directory, then each
Python layer's ``python/`` (``/opt/python``), under ``-s -B -P`` and the environment
the other packaging tests give it — and lists ``signoff`` and every ``signoff.*``
module then in ``sys.modules``. The list must equal the allow-list kept beside this
file, ``import_paths/<function>.txt`` (``functions/<function>/``'s folder name): a
module added to or dropped from a function's cold start is a change to that file,
made on purpose and seen in review.

The stream function has no Python handler (its ``run.sh`` runs ``python3 app.py``
for the Web Adapter): its ``app`` module is imported as the others are, which runs
everything ``app.py`` does before its ``__main__`` block starts the server.

    SIGNOFF_UPDATE_IMPORT_PATHS=1 .venv/bin/python -m pytest tests/packaging/test_import_paths.py

rewrites the lists that differ and still fails, once, naming what it rewrote, so a
run that rewrites never passes; review the diff and run again.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.packaging.test_built_handlers import (
    LAMBDA_PYTHON,
    built_function,
    process_environment,
)
from tests.packaging.test_built_handlers import built as built
from tests.packaging.test_built_handlers import lambda_env as lambda_env
from tests.support.aws import load_template
from tests.support.aws import moto_server as moto_server

if TYPE_CHECKING:
    from collections.abc import Iterable

pytestmark = pytest.mark.slow

ALLOW_LISTS = Path(__file__).with_name("import_paths")
UPDATE = "SIGNOFF_UPDATE_IMPORT_PATHS"
REFRESH = f"{UPDATE}=1 .venv/bin/python -m pytest tests/packaging/test_import_paths.py"
HEADER = f"""\
# The signoff modules a cold import of the {{function}} function's handler loads
# (tests/packaging/test_import_paths.py, under the Lambda runtime's stand-in): one a
# line, sorted. A module added or removed here is a decision, made in review.
# Refresh after `make packaging`: {REFRESH}
"""
# Run in the child: the handler's module imported as the runtime's bootstrap imports it,
# then the signoff modules loaded, as the last line. Logger and Metrics write to stdout.
IMPORT = """\
import importlib, json, sys
answer, sys.stdout = sys.stdout, sys.stderr
importlib.import_module({module!r})
loaded = sorted(m for m in sys.modules if m == "signoff" or m.startswith("signoff."))
answer.write("\\n" + json.dumps(loaded) + "\\n")
"""


def _function_ids() -> list[str]:
    return sorted(
        logical_id
        for logical_id, resource in load_template()["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    )


FUNCTIONS = _function_ids()


@dataclass(frozen=True)
class Difference:
    """What a function's cold import loads beyond its allow-list, and what it no longer does."""

    added: tuple[str, ...]
    removed: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed)


def difference(allowed: Iterable[str], loaded: Iterable[str]) -> Difference:
    allowed, loaded = set(allowed), set(loaded)
    return Difference(
        added=tuple(sorted(loaded - allowed)), removed=tuple(sorted(allowed - loaded))
    )


def explain(function: str, found: Difference) -> str:
    """The failure message: the modules added and removed, and how to refresh the list."""
    lines = [f"{function}'s cold import differs from import_paths/{function}.txt:"]
    lines += [f"  + {name}  (loaded, not in the list)" for name in found.added]
    lines += [f"  - {name}  (in the list, no longer loaded)" for name in found.removed]
    lines.append(f"If the change is meant, refresh the list and review its diff: {REFRESH}")
    return "\n".join(lines)


def read_allow_list(path: Path) -> list[str]:
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def write_allow_list(path: Path, function: str, modules: Iterable[str]) -> None:
    path.parent.mkdir(exist_ok=True)
    path.write_text(HEADER.format(function=function) + "".join(f"{m}\n" for m in modules))


def _code_uri(logical_id: str) -> str:
    """``functions/<folder>/``, the function's name here: SweepWorkerFunction -> sweep_worker."""
    uri = load_template()["Resources"][logical_id]["Properties"]["CodeUri"]
    return Path(str(uri)).name


def loaded_modules(logical_id: str, env: dict[str, str]) -> list[str]:
    """The signoff modules one fresh runtime process has loaded after importing the handler."""
    function = built_function(logical_id)
    module = "app" if function.handler == "run.sh" else function.handler.rpartition(".")[0]
    done = subprocess.run(
        [str(LAMBDA_PYTHON), "-s", "-B", "-P", "-c", IMPORT.format(module=module)],
        capture_output=True,
        text=True,
        env=process_environment(function, env),
        cwd=function.code,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, (
        f"{logical_id} failed to import in the Lambda runtime's stand-in:\n{done.stderr[-6000:]}"
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize("logical_id", FUNCTIONS)
def test_a_cold_import_loads_only_the_modules_its_allow_list_names(
    logical_id: str, lambda_env: dict[str, str]
) -> None:
    # Given the function as built and the allow-list kept beside this test
    name = _code_uri(logical_id)
    path = ALLOW_LISTS / f"{name}.txt"
    allowed = read_allow_list(path) if path.exists() else []
    # When a fresh runtime process imports its handler
    loaded = loaded_modules(logical_id, lambda_env)
    # Then it loaded exactly the signoff modules of the list
    found = difference(allowed, loaded)
    if (found or not path.exists()) and os.environ.get(UPDATE) == "1":
        write_allow_list(path, name, loaded)
        pytest.fail(
            f"rewrote {path.relative_to(ALLOW_LISTS.parents[2])} ({len(loaded)} modules):"
            f" review its diff and run again without {UPDATE}\n{explain(name, found)}"
        )
    assert path.exists(), f"no allow-list for {logical_id} at {path}: run {REFRESH}"
    assert not found, explain(name, found)


def test_the_comparison_fails_on_a_module_added_and_names_it() -> None:
    # Given an allow-list and a cold import that loads one module more and one fewer
    allowed = ["signoff", "signoff.api", "signoff.store"]
    loaded = ["signoff", "signoff.api", "signoff.channels.slack"]
    # When they are compared
    found = difference(allowed, loaded)
    # Then the difference fails the test and names both, with how to refresh the list
    assert found
    assert found == Difference(added=("signoff.channels.slack",), removed=("signoff.store",))
    message = explain("message", found)
    assert "+ signoff.channels.slack" in message and "- signoff.store" in message
    assert REFRESH in message
    # And the same lists in another order are no difference
    assert not difference(allowed, reversed(allowed))
