"""The local stack for the TypeScript client's tests (``clients/typescript/test``).

::

    python -m tests.support.node_stack [--no-stream]

Writes the agents of the transport conformance test
(``tests/e2e/transport/test_transport_conformance.py``: its scripted ``shop`` and its
``broken`` agent, whose model never answers) to a temporary folder, starts
``signoff dev``'s stack on them on free ports (``--no-stream``: without the SSE
route, as a deployed HTTP API), adds an API key of the ``default`` tenant and
prints one JSON line, ``{"url", "apiKey"}``. It stops when its standard input
closes — which it does when the test process that started it exits, however
that exits — or on SIGTERM. The Node tests drive the same scripted turns the
Python client's conformance test drives, on the same stack.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from signoff.keys.api_keys import new_api_key
from signoff_dev.local.stack import LocalStack, StackSettings
from tests.e2e.transport.test_transport_conformance import (
    BROKEN_YAML,
    CHANNELS,
    KEY_ENV,
    SHOP_RULES,
    SHOP_SCRIPT,
    SHOP_TOOLS,
    SHOP_YAML,
)


def write_agents(root: Path) -> Path:
    """The conformance agents under ``root/agents``."""
    agents = root / "agents"
    shop, broken = agents / "shop", agents / "broken"
    shop.mkdir(parents=True)
    broken.mkdir()
    (agents / "channels.yaml").write_text(CHANNELS)
    (shop / "agent.yaml").write_text(SHOP_YAML)
    (shop / "actauth.yml").write_text(SHOP_RULES)
    (shop / "tools.py").write_text(SHOP_TOOLS)
    (shop / "script.yaml").write_text(SHOP_SCRIPT)
    (broken / "agent.yaml").write_text(BROKEN_YAML)
    (broken / "actauth.yml").write_text("default_decision: allow\n")
    return agents


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-stream", action="store_true", help="serve no SSE route")
    args = parser.parse_args()
    os.environ.update(KEY_ENV)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with tempfile.TemporaryDirectory(prefix="signoff-node-stack-") as folder:
        console = io.StringIO()
        settings = StackSettings(
            port=0,
            console=console,
            logs=console,
            agents=write_agents(Path(folder)),
            stream=not args.no_stream,
        )
        with LocalStack(settings) as stack:
            clear, record = new_api_key("default", "node tests", time.time())
            stack.message_api().api_keys.add(record)
            print(json.dumps({"url": stack.url, "apiKey": clear}), flush=True)
            # stdin's end: the test process is gone (or closed it to stop the stack)
            threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
            stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
