"""DynamoDB's transaction conflicts, which moto does not have, on top of moto.

DynamoDB cancels a ``TransactWriteItems`` whose item another transaction is
writing at that moment (a ``TransactionCanceledException`` with the reason
``TransactionConflict`` for that item): nothing is written, and botocore does not
retry it. moto applies transactions one after another and never cancels one that
way, so code that must answer such a cancellation would go untested.

``conflicting_dynamodb`` puts that behaviour back: a transaction that names an
item which another transaction has in flight (sent, not yet answered) is
answered at once with the cancellation DynamoDB sends, on the wire, so botocore
parses it as it would the real one. Call it after the ``aws`` fixture has
serialised moto's requests: the conflict is decided before the request queues.
``Conflicts.hold`` keeps an item in flight, as a writer that is slow to finish.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any, Final

from moto.core.botocore_stubber import BotocoreStubber

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pytest

__all__ = ["CANCELLED", "Conflicts", "conflicting_dynamodb"]

CANCELLED: Final = "com.amazonaws.dynamodb.v20120810#TransactionCanceledException"
_TARGET: Final = "DynamoDB_20120810.TransactWriteItems"


Key = tuple[str, str]  # an item's (pk, sk)


def _keys(body: dict[str, Any]) -> list[Key]:
    """The key of each item of a TransactWriteItems body, in its order."""
    keys = []
    for operation in body["TransactItems"]:
        ((kind, write),) = operation.items()
        key = write["Item"] if kind == "Put" else write["Key"]
        keys.append((key["pk"]["S"], key["sk"]["S"]))
    return keys


def _cancellation(conflicting: list[bool]) -> tuple[int, dict[str, str], str]:
    codes = ["TransactionConflict" if hit else "None" for hit in conflicting]
    reasons = [
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
        if hit
        else {"Code": "None"}
        for hit in conflicting
    ]
    message = (
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        f"[{', '.join(codes)}]"
    )
    body = {"__type": CANCELLED, "CancellationReasons": reasons, "Message": message}
    return 400, {"Content-Type": "application/x-amz-json-1.0"}, json.dumps(body)


class Conflicts:
    """The items transactions have in flight now, and what was sent and cancelled."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()  # transactions "sent", and "cancelled"
        self._lock = threading.Lock()
        self._in_flight: Counter[Key] = Counter()

    def begin(self, keys: list[Key]) -> list[bool] | None:
        """Start a transaction of ``keys``; which of them conflict, if any does (None: none)."""
        with self._lock:
            self.counts["sent"] += 1
            conflicting = [self._in_flight[key] > 0 for key in keys]
            if any(conflicting):
                self.counts["cancelled"] += 1
                return conflicting
            self._in_flight.update(keys)
            return None

    def end(self, keys: list[Key]) -> None:
        with self._lock:
            self._in_flight.subtract(keys)

    @contextlib.contextmanager
    def hold(self, key: Key) -> Iterator[None]:
        """Keep ``key`` in flight meanwhile: every transaction writing it is cancelled."""
        with self._lock:
            self._in_flight[key] += 1
        try:
            yield
        finally:
            self.end([key])


def conflicting_dynamodb(monkeypatch: pytest.MonkeyPatch) -> Conflicts:
    """Cancel a transaction whose item another one has in flight, as DynamoDB does."""
    conflicts = Conflicts()
    process = BotocoreStubber.process_request

    def with_conflicts(self: BotocoreStubber, request: Any) -> Any:
        if request.headers.get("X-Amz-Target", b"") not in (_TARGET, _TARGET.encode()):
            return process(self, request)
        keys = _keys(json.loads(request.body))
        conflicting = conflicts.begin(keys)
        if conflicting is not None:
            return _cancellation(conflicting)
        try:
            return process(self, request)
        finally:
            conflicts.end(keys)

    monkeypatch.setattr(BotocoreStubber, "process_request", with_conflicts)
    return conflicts
