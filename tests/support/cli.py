"""The ``signoff`` command in a real subprocess, as a person types it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The console script's entry (`signoff` is signoff_dev.cli:main), not `-m`: runpy
# warns on stderr for a module its package has already imported.
MAIN = "import sys; from signoff_dev.cli import main; sys.exit(main(sys.argv[1:]))"
# The developer's own settings that would change what the command does: another
# agents folder, another model, colour turned off.
HOST_SETTINGS = ("SIGNOFF_AGENTS_DIR", "SIGNOFF_MODEL", "NO_COLOR")


def signoff_cli(
    *args: str, cwd: Path = ROOT, home: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``signoff *args`` in ``cwd``, its output captured and no stdin; this process's
    environment less ``HOST_SETTINGS``, ``SIGNOFF_HOME`` set to ``home`` when given,
    then ``env`` on top."""
    environ = {k: v for k, v in os.environ.items() if k not in HOST_SETTINGS}
    if home is not None:
        environ["SIGNOFF_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        cwd=cwd,
        env={**environ, **env},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
