"""Agent folders with a ``hooks.py`` that records what it is called with, for tests.

``agents_with_hooks`` copies the sample agents (``customer-service``,
``daily-digest``, ``channels.yaml``) and gives each a ``hooks.py`` written the
loopengine way (the seed's names: ``ctx.sessionId``, ``ctx.stopReason``), which
appends one JSON line per call to ``log``, with the process and thread it ran on.
"""

from __future__ import annotations

import json
import shutil
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_AGENTS = ROOT / "agents"

_RECORDING = """
import json, os, threading, time

LOG = {log!r}
MODE = {mode!r}


def _record(entry):
    entry["pid"] = os.getpid()
    entry["thread"] = threading.current_thread().name
    with open(LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\\n")


def on_run_start(ctx):
    _record({{"hook": "on_run_start", "agent": ctx.agent, "tenant": ctx.tenant,
             "sessionId": ctx.sessionId, "channel": ctx.channel, "trigger": ctx.trigger}})
    if MODE == "fail":
        raise RuntimeError("the announcement service is down")
    if MODE == "slow":
        time.sleep(30)


def on_run_finish(ctx):
    _record({{"hook": "on_run_finish", "agent": ctx.agent, "tenant": ctx.tenant,
             "sessionId": ctx.sessionId, "channel": ctx.channel, "text": ctx.text,
             "stopReason": ctx.stopReason}})
    if MODE == "fail":
        raise RuntimeError("the announcement service is down")
    if MODE == "slow":
        time.sleep(30)


def tenant_for(headers):
    # The loopengine way: trust a tenant header. Here only verified headers arrive,
    # so a client's own x-tenant-id never reaches this.
    if headers.get("x-tenant-id"):
        return headers["x-tenant-id"]
    if headers.get("x-signoff-tenant") == "acme":
        return "acme-eu"
    return None


def session_id_for(body):
    order = body.get("orderId")
    return f"order-{{order}}" if order else None
"""


def agents_with_hooks(root: Path, log: Path, *, mode: str = "record") -> Path:
    """``root/agents``: the sample agents, each with the recording ``hooks.py``.

    ``mode``: ``record``; ``fail`` (the run hooks raise after recording); ``slow``
    (they sleep 30 s after recording).
    """
    agents = root / "agents"
    shutil.copytree(SAMPLE_AGENTS, agents)
    source = textwrap.dedent(_RECORDING).format(log=str(log), mode=mode)
    for name in ("customer-service", "daily-digest"):
        (agents / name / "hooks.py").write_text(source, encoding="utf-8")
    return agents


def hook_calls(log: Path, *, settle: float = 0.0) -> list[dict[str, Any]]:
    """The recorded calls, oldest first (after ``settle`` seconds for stragglers)."""
    if settle:
        time.sleep(settle)
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def named(calls: list[dict[str, Any]], hook: str) -> list[dict[str, Any]]:
    return [call for call in calls if call["hook"] == hook]
