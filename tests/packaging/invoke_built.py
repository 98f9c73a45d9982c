"""Invokes a built Lambda handler the way the runtime does, in the runtime's stand-in.

    .venv-lambda/bin/python -s -B -P tests/packaging/invoke_built.py app.handler \\
        --timeout 60 --probe pytest --probe signoff < events.json

Reads a JSON list of events on stdin, imports the handler's module (the cold start),
calls the handler once per event in this one process with a context like Lambda's,
and prints one JSON object on stdout::

    {"responses": [...], "modules": {"pytest": null, "signoff": "/…/__init__.py"},
     "sys_path": [...], "base_prefix": "…", "import_seconds": 0.9}

A handler that raises answers ``{"errorType", "errorMessage", "stackTrace"}``, as
Lambda reports it. A probed module is imported after the last invocation; ``null``
means it cannot be imported. The handler's logs go to stderr: stdout is the answer.

Only the standard library here — the process has nothing but the function's code,
its layers and the runtime's boto3 on ``sys.path``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import secrets
import sys
import time
import traceback
import uuid
from dataclasses import dataclass, field
from typing import Any, TextIO


@dataclass
class LambdaContext:
    """The attributes and the one method of the runtime's context object."""

    function_name: str
    memory_limit_in_mb: int
    deadline: float  # time.monotonic() when the function's timeout ends
    function_version: str = "$LATEST"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = ""
    log_stream_name: str = "2025/01/01/[$LATEST]0123456789abcdef0123456789abcdef"
    identity: Any = None
    client_context: Any = None

    def __post_init__(self) -> None:
        self.log_group_name = f"/aws/lambda/{self.function_name}"

    @property
    def invoked_function_arn(self) -> str:
        region = os.environ.get("AWS_REGION", "us-east-1")
        return f"arn:aws:lambda:{region}:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


def _trace_header() -> str:
    """A fresh X-Ray trace header, as the runtime sets ``_X_AMZN_TRACE_ID`` per invocation."""
    root = f"1-{int(time.time()):08x}-{secrets.token_hex(12)}"
    return f"Root={root};Parent={secrets.token_hex(8)};Sampled=1"


def _invoke(handler: Any, event: Any, timeout: float) -> Any:
    os.environ["_X_AMZN_TRACE_ID"] = _trace_header()
    context = LambdaContext(
        function_name=os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "function"),
        memory_limit_in_mb=int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")),
        deadline=time.monotonic() + timeout,
    )
    try:
        return handler(event, context)
    except Exception as exc:
        return {
            "errorType": type(exc).__name__,
            "errorMessage": str(exc),
            "stackTrace": traceback.format_exception(exc),
        }


def _origin(name: str) -> str | None:
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    return getattr(module, "__file__", None) or "built-in"


def main(argv: list[str] | None = None, answer: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("handler", help="the template's Handler, module.function")
    parser.add_argument("--timeout", type=float, default=3.0, help="the function's Timeout (s)")
    parser.add_argument("--probe", action="append", default=[], help="a module to look for")
    args = parser.parse_args(argv)
    answer = answer or sys.stdout
    events = json.load(sys.stdin)
    # Logger and Metrics write to sys.stdout: send them where the runtime's logs go.
    sys.stdout = sys.stderr
    module_name, _, function_name = args.handler.rpartition(".")
    started = time.perf_counter()
    handler = getattr(importlib.import_module(module_name), function_name)
    import_seconds = time.perf_counter() - started
    responses = [_invoke(handler, event, args.timeout) for event in events]
    result = {
        "responses": responses,
        "modules": {name: _origin(name) for name in args.probe},
        "sys_path": sys.path,
        "base_prefix": sys.base_prefix,
        "import_seconds": import_seconds,
    }
    json.dump(result, answer, default=str)
    answer.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
