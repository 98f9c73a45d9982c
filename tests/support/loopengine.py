"""A loopengine-style agent folder: the sample customer-service agent, written as a
loopengine user would bring it (seed 000's ``AgentConfig`` keys in ``agent.yaml``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

AGENTS = Path(__file__).resolve().parents[2] / "agents"
SAMPLE = AGENTS / "customer-service"
SYSTEM_PROMPT = "You are the customer-service agent of a small online shop."
# loopengine's onRunStart / onRunFinish as hooks.py: each call appends one JSON line
# (the seed's context fields) to the file $LOOP_HOOK_LOG names.
HOOKS = """\
import json
import os


def _log(hook, ctx, **fields):
    with open(os.environ["LOOP_HOOK_LOG"], "a", encoding="utf-8") as log:
        base = {"hook": hook, "agent": ctx.agent, "tenant": ctx.tenant, "channel": ctx.channel}
        log.write(json.dumps({**base, "sessionId": ctx.sessionId, **fields}) + "\\n")


def on_run_start(ctx):
    _log("on_run_start", ctx, trigger=ctx.trigger)


def on_run_finish(ctx):
    _log("on_run_finish", ctx, text=ctx.text, stopReason=ctx.stopReason)
"""


def loopengine_agent(root: Path, **settings: Any) -> Path:
    """``root/customer-service``: the sample's tools and script, its ``agent.yaml`` in
    loopengine's keys (``name``, ``systemPrompt``, ``maxTurns``, the inline ``rules`` and
    ``defaultDecision``) plus ``settings``, and a ``hooks.py`` (``HOOKS``) for its
    ``onRunStart`` / ``onRunFinish``.

    Its rules are the sample's ``actauth.yml``, moved inline unchanged
    (``default_decision`` is spelled ``defaultDecision`` there, as in loopengine).
    """
    folder = root / "customer-service"
    folder.mkdir(parents=True)
    for name in ("tools.py", "script.yaml"):
        shutil.copy(SAMPLE / name, folder / name)
    rules = yaml.safe_load((SAMPLE / "actauth.yml").read_text(encoding="utf-8"))
    config: dict[str, Any] = {
        "name": "customer-service",
        "systemPrompt": SYSTEM_PROMPT,
        "maxTurns": 8,
        "model": {"provider": "scripted", "script": "script.yaml"},
        "defaultDecision": rules["default_decision"],
        "rules": rules["rules"],
    }
    config.update(settings)
    (folder / "agent.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (folder / "hooks.py").write_text(HOOKS, encoding="utf-8")
    return folder
