"""A process killed (SIGKILL) mid-tool: the re-driven turn never silently repeats a side effect."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from tests.conftest import ROOT, validate_event
from tests.support.aws import moto_server as moto_server
from tests.support.crash_child import LEASE_TTL, turns

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

AGENTS = ROOT / "tests" / "fixtures" / "agents"


def kill_mid_tool(env: dict[str, str], effects: Path, session: str, message: str) -> None:
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.crash_child",
            str(AGENTS),
            "crashy",
            session,
            message,
        ],
        cwd=ROOT,
        env={**os.environ, **env, "CRASHY_EFFECTS": str(effects), "CRASHY_HANG": "1"},
    )
    try:
        deadline = time.monotonic() + 60
        while not (effects.exists() and effects.read_text()):
            assert child.poll() is None, "the child ended before its tool ran"
            assert time.monotonic() < deadline, "the tool never started"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        assert child.wait(timeout=30) == -signal.SIGKILL


def test_killed_unsafe_tool_is_reported_interrupted(
    moto_server: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    effects = tmp_path / "effects.log"
    kill_mid_tool(moto_server, effects, "s-charge", "charge me")
    monkeypatch.setenv("CRASHY_EFFECTS", str(effects))
    time.sleep(LEASE_TTL + 0.2)  # the dead process's lease runs out
    done = turns(AGENTS, "survivor").proceed("s-charge")
    for event in done.events:
        validate_event(event)
    results = [e for e in done.events if e["type"] == "tool:result"]
    assert [r["statusText"] for r in results] == ["Error."]
    assert "interrupted" in results[0]["detailText"]
    assert done.text is not None and done.text.startswith("charge failed: Error: interrupted")
    assert len(effects.read_text().splitlines()) == 1, "the side effect happened once"


def test_killed_idempotent_tool_reruns_with_the_same_key(
    moto_server: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    effects = tmp_path / "effects.log"
    kill_mid_tool(moto_server, effects, "s-refund", "refund please")
    monkeypatch.setenv("CRASHY_EFFECTS", str(effects))
    time.sleep(LEASE_TTL + 0.2)
    done = turns(AGENTS, "survivor").proceed("s-refund")
    keys = effects.read_text().splitlines()
    assert len(keys) == 2 and keys[0] == keys[1], "re-run with the same idempotency key"
    assert done.text == "refund: refunded A-1"
    assert [e["type"] for e in done.events].count("tool:started") == 1
