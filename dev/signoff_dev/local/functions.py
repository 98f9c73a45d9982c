"""The template's functions in this process: imported as Lambda would, invoked one at a time.

Each function's ``app.py`` is imported under a fresh module name (its cold
start: the module-level wiring reads the environment then). An invocation gets
a context whose remaining time counts down from the template's ``Timeout``, so
a long turn yields and continues as it does on Lambda.

A function serves one invocation at a time, as one Lambda sandbox does. HTTP
invocations are also serialised across functions (the gateway passes one
``serial`` lock): Powertools' resolver keeps the current request on a class
attribute (``BaseRouter.current_event``) that every resolver in the process
shares, so two requests at once, even to two functions, would read each
other's event.

Asynchronous invocations (a turn's continuation) reach a function through
the stack's Lambda Invoke API (``signoff_dev.local.lambda_api``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from signoff.errors import ConfigError, UsageError
from signoff_dev.local.template import ACCOUNT_ID, REGION, TEMPLATE_FILE

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from types import ModuleType

    from signoff_dev.local.template import FunctionSpec

__all__ = ["FunctionOutput", "LocalContext", "LocalFunction"]

# Set while a thread runs a handler: its prints are the function's log, not the console's.
_invocation = threading.local()


@dataclass
class LocalContext:
    """What the Lambda runtime passes as ``context``; the deadline is monotonic time."""

    function_name: str
    deadline: float
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


class LocalFunction:
    """One ``AWS::Serverless::Function`` of the template, imported from its ``CodeUri``."""

    def __init__(self, spec: FunctionSpec, root: Path) -> None:
        self.spec = spec
        module_file, _, self._attribute = spec.handler.rpartition(".")
        self.path = root / spec.code_uri / f"{module_file.replace('.', '/')}.py"
        self._lock = threading.Lock()
        self._module: ModuleType | None = None

    @property
    def name(self) -> str:
        return self.spec.logical_id

    @property
    def module(self) -> ModuleType:
        """The imported module (``load`` first)."""
        if self._module is None:
            raise UsageError(f"{self.name} has not been imported: start the stack first")
        return self._module

    def load(self) -> ModuleType:
        """Import the handler's module afresh, as a cold start does.

        Raises:
            ConfigError: the template's ``CodeUri`` / ``Handler`` names no importable file.
        """
        name = f"signoff_local_{self.name}_{uuid.uuid4().hex[:8]}"
        spec = importlib.util.spec_from_file_location(name, self.path)
        if spec is None or spec.loader is None or not self.path.is_file():
            raise ConfigError(TEMPLATE_FILE, f"{self.name}.Handler", f"no module at {self.path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        if not callable(getattr(module, self._attribute, None)):
            raise ConfigError(
                TEMPLATE_FILE, f"{self.name}.Handler", f"{self.path} has no {self._attribute}()"
            )
        self._module = module
        return module

    def unload(self) -> None:
        """Forget the module, so a later stack imports it afresh."""
        if self._module is not None:
            sys.modules.pop(self._module.__name__, None)
            self._module = None

    def invoke(self, event: dict[str, Any], *, serial: threading.Lock | None = None) -> Any:
        """Run the handler on ``event``, waiting for the function's previous invocation.

        ``serial`` is a lock shared with other functions, taken after this
        function's own (always in that order, so two invocations never wait on
        each other's locks).
        """
        handler: Callable[[dict[str, Any], Any], Any] = getattr(self.module, self._attribute)
        with self._lock, serial or contextlib.nullcontext():
            context = LocalContext(
                function_name=self.spec.physical_name,
                deadline=time.monotonic() + self.spec.timeout,
            )
            _invocation.function = self.name
            try:
                return handler(event, context)
            finally:
                _invocation.function = None


class FunctionOutput(io.TextIOBase):
    """``sys.stdout`` while a stack runs: handlers' prints go to ``logs``, the rest through.

    On Lambda a function's stdout is its log (Powertools writes its JSON log
    lines and EMF metrics there), apart from anything a person reads. Here the
    console and the demo's narration share the process's stdout, so writes made
    while a handler runs are sent to ``logs`` (stderr, by default) instead.
    """

    def __init__(self, console: TextIO, logs: TextIO) -> None:
        self.console = console
        self.logs = logs

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        inside = getattr(_invocation, "function", None) is not None
        return (self.logs if inside else self.console).write(text)

    def flush(self) -> None:
        self.console.flush()
        self.logs.flush()
