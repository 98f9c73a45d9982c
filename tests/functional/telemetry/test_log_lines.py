"""Everything the functions write is JSON lines: a cold start and invocations of each one.

The functions log with ``LoggingConfig.LogFormat: JSON``; a plain-text line in the
same log stream (a Python warning such as Powertools' "No application metrics to
publish", a library's INFO line reaching the runtime's root logger, X-Ray's
notices) breaks every query over it. The child runs the handlers as Lambda would,
tracing on (X-Ray's segment from ``_X_AMZN_TRACE_ID``, its daemon address a
loopback port nobody reads) and the Advanced Logging Controls' level set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.aws import free_port
from tests.support.aws import moto_server as moto_server
from tests.support.lambdas import ROOT

TRACE_ID = "Root=1-6749f101-3f9c2b7d8e1a4c5b6d7e8f01;Parent=53995c3f42cd8ad8;Sampled=1"


@pytest.mark.slow
def test_a_cold_start_and_an_invocation_of_each_function_write_only_json_lines(
    moto_server: dict[str, str],
) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("POWERTOOLS_")},
        **moto_server,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "SIGNOFF_AGENTS_DIR": str(ROOT / "agents"),
        "SIGNOFF_PUBLIC_URL": "https://api.example.com",
        "SIGNOFF_ALLOW_ANONYMOUS": "true",
        "SIGNOFF_CHANNEL_SECRETS_PREFIX": "signoff/",
        # What Lambda sets: the function, JSON logs at the template's levels, tracing.
        "AWS_LAMBDA_FUNCTION_NAME": "signoff-message",
        "AWS_LAMBDA_LOG_FORMAT": "JSON",
        "AWS_LAMBDA_LOG_LEVEL": "INFO",
        "LAMBDA_TASK_ROOT": str(ROOT),
        "_X_AMZN_TRACE_ID": TRACE_ID,
        "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{free_port()}",
        "POWERTOOLS_SERVICE_NAME": "signoff",
        "POWERTOOLS_METRICS_NAMESPACE": "signoff",
    }
    env.pop("PYTHONWARNINGS", None)
    child = subprocess.run(
        [sys.executable, "-m", "tests.support.log_child"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr
    lines = [line for line in (child.stdout + child.stderr).splitlines() if line.strip()]
    plain = []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            plain.append(line)
    assert plain == [], "\n".join(plain)
    assert json.loads(child.stdout.splitlines()[-1]) == {"child": "done"}
