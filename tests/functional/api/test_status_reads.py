"""The status route reads only the log chunks that hold the events after ``?after=N``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.store.sessions import TableSessions
from tests.functional.api.test_handlers import pause_refund
from tests.support.actors import person
from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pytest


def status(lambdas: Lambdas, session_id: str, after: int) -> dict[str, Any]:
    event = load_event("session_status", SESSION_ID=session_id)
    event["rawQueryString"] = f"after={after}"
    event["queryStringParameters"] = {"after": str(after)}
    return body(lambdas.invoke("resolve", event))


def test_an_answer_reads_the_chunks_after_n_only(
    lambdas: Lambdas, monkeypatch: pytest.MonkeyPatch
) -> None:
    paused = pause_refund(lambdas)
    session_id = paused["sessionId"]
    lambdas.api.turns.resolve(paused["id"], decision="deny", actor=person("ops", "api"))
    chunks = list(lambdas.api.sessions.read_log(session_id))
    everything = [event for chunk in chunks for event in chunk.events]
    assert len(chunks) >= 3 and len(everything) > len(chunks)

    read: list[int] = []
    for name in ("read_log", "read_log_back"):
        original = getattr(TableSessions, name, None)
        if original is None:
            continue

        def counted(
            self: TableSessions, *args: Any, _read: Any = original, **kw: Any
        ) -> Iterator[Any]:
            for chunk in _read(self, *args, **kw):
                read.append(chunk.seq)
                yield chunk

        monkeypatch.setattr(TableSessions, name, counted)

    for after in range(len(everything) + 2):
        read.clear()
        answer = status(lambdas, session_id, after)
        assert answer["status"] == "done"
        assert answer["events"] == everything[after:]
        assert answer["next"] == len(everything)
        # the chunks read are the newest ones, back to the one holding event ``after``
        assert sorted(read) == holding(chunks, len(everything) - after)


def holding(chunks: list[Any], wanted: int) -> list[int]:
    """The seqs of the newest chunks that hold the last ``wanted`` events."""
    seqs: list[int] = []
    for chunk in reversed(chunks):
        if wanted <= 0:
            break
        seqs.append(chunk.seq)
        wanted -= len(chunk.events)
    return sorted(seqs)
