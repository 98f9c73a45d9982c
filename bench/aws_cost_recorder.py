"""``bench/aws_cost.py``'s recorder: every AWS request the local stack's functions make
while it is on, and every invocation they serve.

It wraps botocore's one request path (``BaseClient._make_api_call``), the local
stack's one invocation path (``LocalFunction.invoke``) and the thread pools' submit,
so a request is its function's whichever thread makes it; around each DynamoDB write
it reads the item's images before and after, and charges the units
``bench/aws_cost_units.py`` computes from their sizes.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.aws_cost_units import (
    INDEXES,
    index_write_units,
    item_size,
    request_reads,
    request_writes,
)
from bench.metering import write_units

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from bench.metering import GlobalIndex


@dataclass
class Invocation:
    function: str
    trigger: str  # http, sqs, async, schedule
    seconds: float


@dataclass
class Recorder:
    """Every request the functions make while ``on``, and every invocation they serve."""

    on: bool = False
    requests: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # fn, svc, op
    rru: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))  # by function
    wru: Counter[str] = field(default_factory=Counter)
    invocations: list[Invocation] = field(default_factory=list)
    batches: int = 0  # SQS batches the event source mapping delivered
    indexes: tuple[GlobalIndex, ...] = INDEXES  # the measured template's
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _running: Counter[str] = field(default_factory=Counter)
    _local: threading.local = field(default_factory=threading.local)
    last_active: float = 0.0

    def running(self) -> int:
        with self._lock:
            return sum(self._running.values())

    def function_now(self) -> str | None:
        """The function a request now is, or None for one not to record: the
        recorder's own (``private``, inside a function's write too) or the workload's."""
        if getattr(self._local, "private", False):
            return None
        named: str | None = getattr(self._local, "function", None)
        if named is not None:
            return named
        if threading.current_thread().name in {"sqs-poller", "MainThread"}:
            return None  # the event source mapping's own polls; the workload's requests
        with self._lock:
            running = [name for name, count in self._running.items() if count]
        return running[0] if len(running) == 1 else None

    @contextlib.contextmanager
    def private(self) -> Iterator[None]:
        """Requests made inside are the recorder's own (item images), never recorded."""
        self._local.private = True
        try:
            yield
        finally:
            self._local.private = False

    def install(
        self, images: Callable[[str, dict[str, Any]], dict[str, Any] | None]
    ) -> Callable[[], None]:
        """Wrap botocore's one request path and the local stack's one invocation path,
        and the thread pools' submit: work a function hands to a pool (the notifier's
        sends, its batch's deliveries) is that function's, whatever else runs meanwhile.

        Returns what puts all three back.
        """
        from concurrent.futures import ThreadPoolExecutor

        from botocore.client import BaseClient

        from signoff_dev.local.functions import LocalFunction

        recorder = self
        make_api_call = BaseClient._make_api_call  # type: ignore[attr-defined]
        invoke = LocalFunction.invoke
        submit = ThreadPoolExecutor.submit

        def submitted(pool: ThreadPoolExecutor, task: Any, /, *args: Any, **kwargs: Any) -> Any:
            function = getattr(recorder._local, "function", None)
            if function is None:
                return submit(pool, task, *args, **kwargs)

            def attributed(*args: Any, **kwargs: Any) -> Any:
                recorder._local.function = function
                try:
                    return task(*args, **kwargs)
                finally:
                    recorder._local.function = None

            return submit(pool, attributed, *args, **kwargs)

        def recorded(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
            function = recorder.function_now() if recorder.on else None
            if function is None:
                return make_api_call(client, operation, params)
            service = client.meta.service_model.service_name
            with recorder._lock:
                recorder.requests[(function, service, operation)] += 1
            if service != "dynamodb":
                return make_api_call(client, operation, params)
            return recorder._dynamodb(
                function,
                operation,
                params,
                lambda: make_api_call(client, operation, params),
                images,
            )

        def invoked(local: LocalFunction, event: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            trigger = (
                "http"
                if "routeKey" in event
                else "sqs"
                if "Records" in event
                else "schedule"
                if "detail-type" in event
                else "async"
            )
            recorder._local.function = local.name
            with recorder._lock:
                recorder._running[local.name] += 1
            started = time.perf_counter()
            try:
                return invoke(local, event, *args, **kwargs)
            finally:
                seconds = time.perf_counter() - started
                recorder._local.function = None
                with recorder._lock:
                    recorder._running[local.name] -= 1
                    recorder.last_active = time.monotonic()
                    if recorder.on:
                        recorder.invocations.append(Invocation(local.name, trigger, seconds))
                        recorder.batches += trigger == "sqs"

        BaseClient._make_api_call = recorded  # type: ignore[attr-defined]
        LocalFunction.invoke = invoked  # type: ignore[assignment, method-assign]
        ThreadPoolExecutor.submit = submitted  # type: ignore[assignment, method-assign]

        def uninstall() -> None:
            ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]
            BaseClient._make_api_call = make_api_call  # type: ignore[attr-defined]
            LocalFunction.invoke = invoke  # type: ignore[method-assign]

        return uninstall

    def _dynamodb(
        self,
        function: str,
        operation: str,
        params: dict[str, Any],
        call: Callable[[], Any],
        images: Callable[[str, dict[str, Any]], dict[str, Any] | None],
    ) -> Any:
        writes = request_writes(operation, params)  # (table, key, transactional, attempted item)
        with self.private():
            before = [images(table, key) for table, key, _, _ in writes]
        failed: BaseException | None = None
        try:
            answer = call()
        except Exception as error:  # a failed condition is still charged
            failed, answer = error, {}
        with self.private():
            after = [images(table, key) for table, key, _, _ in writes]
        wru = 0
        for (_, _, transactional, attempted), was, now in zip(writes, before, after, strict=True):
            size = max(item_size(was), item_size(now), item_size(attempted))
            wru += write_units(size) * (2 if transactional else 1)
            if failed is None:  # a refused write changes no index
                wru += index_write_units(was, now, self.indexes)
        rru = request_reads(operation, params, answer)
        with self._lock:
            self.wru[function] += wru
            self.rru[function] += rru
        if failed is not None:
            raise failed
        return answer
