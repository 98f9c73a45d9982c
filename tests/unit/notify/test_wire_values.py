"""The wire values with one parser each: the outbox subject and the notify queue's message.

Their text is what deployed tables and queues hold, so every test here pins the text
too: a parse and a format that agreed with each other but not with the stored rows
would pass a round trip alone.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from signoff.channels.subject import Subject
from signoff.notify.message import NotifyMessage

ROOT = Path(__file__).resolve().parents[3]
# Where queue messages are written and read; tests and benchmarks may spell the wire.
SOURCES = (ROOT / "layers" / "signoff" / "signoff", ROOT / "dev" / "signoff_dev")
# Reads of a ``pendingId`` key that are not the queue message's, each with its reason.
NOT_THE_QUEUE_MESSAGE = {
    # The value of a Slack answer button: channels.slack writes {"pendingId", "answer"}
    # into it, Slack hands it back in the interaction, and the callback checks each field
    # with a BadForm of its own (tests/unit/channels/test_slack_interactions.py) — Slack's payload.
    "signoff/channels/slack/interactions.py",
}

STORED = [
    # what the outbox rows and queue messages of a deployment hold, kind by kind
    (Subject.item("01J0PENDING"), "01J0PENDING"),
    (Subject.run_start("r1"), "run:r1:run_start"),
    (Subject.run_start("r1", "p1"), "run:r1:run_start:p1"),
    (Subject.run_finish("r1"), "run:r1:run_finish"),
    (Subject.stuck("p1", 2), "stuck:p1:2"),
    (Subject.stalled("s:with:colons", "r1"), "stalled:s:with:colons:r1"),
    (Subject.escalate("p:1", 3), "escalate:p:1:3"),
    (Subject.votes("p1", 1), "votes:p1:1"),
]


@pytest.mark.parametrize(("subject", "text"), STORED, ids=[text for _, text in STORED])
def test_a_subject_is_written_as_the_stored_text_and_read_back(subject: Subject, text: str) -> None:
    assert str(subject) == text
    assert Subject.parse(text) == subject


def test_every_kind_has_its_text() -> None:
    assert {subject.kind for subject, _ in STORED} == {
        "item",
        "run_start",
        "run_finish",
        "stuck",
        "stalled",
        "escalate",
        "votes",
    }


def test_only_an_items_escalation_steps_and_votes_are_composed_from_the_item() -> None:
    composed = {text: subject.composed_from for subject, text in STORED}

    assert composed == {
        "01J0PENDING": "01J0PENDING",
        "run:r1:run_start": None,
        "run:r1:run_start:p1": None,
        "run:r1:run_finish": None,
        "stuck:p1:2": None,
        "stalled:s:with:colons:r1": None,
        "escalate:p:1:3": "p:1",
        "votes:p1:1": "p1",
    }


@pytest.mark.parametrize(
    "text",
    [
        "",
        "stuck:p1",  # no number
        "escalate:p1:two",
        "votes::1",  # no item
        "run:r1:run_begin",
        "run:r1:run_startX",
        "run::run_finish",
        "stalled:r1",  # no session
    ],
)
def test_text_that_starts_as_a_kind_and_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"subject"):
        Subject.parse(text)


def test_a_subject_has_the_fields_of_its_kind_only() -> None:
    with pytest.raises(ValueError, match="has no number"):
        Subject(kind="item", pending_id="p1", number=1)
    with pytest.raises(ValueError, match="needs its run_id"):
        Subject(kind="stalled", session_id="s1")
    with pytest.raises(ValueError, match="reads as another subject"):
        Subject.item("stuck:p1:1")  # its text would parse as a reminder


def test_a_pydantic_field_takes_and_gives_the_text() -> None:
    class Carrier(BaseModel):
        subject: Subject

    carried = Carrier.model_validate({"subject": "escalate:p1:2"})

    assert carried.subject == Subject.escalate("p1", 2)
    assert carried.model_dump() == {"subject": "escalate:p1:2"}
    assert Carrier(subject=Subject.votes("p1", 3)).model_dump_json() == '{"subject":"votes:p1:3"}'
    with pytest.raises(ValidationError):
        Carrier.model_validate({"subject": 7})


def test_the_queue_message_keeps_its_keys() -> None:
    message = NotifyMessage.of(Subject.stuck("p1", 2), "s1")

    assert message.wire() == {"pendingId": "stuck:p1:2", "sessionId": "s1"}
    # a message enqueued before this release, as SQS hands it to the notifier
    in_flight = '{"pendingId":"01J0PENDING","sessionId":"s1"}'
    assert NotifyMessage.parse(in_flight) == NotifyMessage.of(Subject.item("01J0PENDING"), "s1")
    assert NotifyMessage.parse(json.dumps(message.wire())) == message
    assert NotifyMessage.parse(message.wire()) == message  # as MemoryQueue.receive reads it
    # a stored notification that names no session is enqueued with an empty one
    assert NotifyMessage.parse('{"pendingId":"p1","sessionId":""}').session_id == ""


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        '{"sessionId": "s1"}',
        '{"pendingId": "p1"}',
        '{"pendingId": "stuck:p1", "sessionId": "s1"}',
        '{"pendingId": 1, "sessionId": "s1"}',
    ],
)
def test_a_body_that_is_no_queue_message_is_refused(body: str) -> None:
    with pytest.raises(ValidationError):
        NotifyMessage.parse(body)


def _reads_by_key(tree: ast.AST) -> list[int]:
    """Lines that read ``pendingId`` out of a dict (``m["pendingId"]``, ``m.get(...)``)
    or send a queue a dict written by hand (``queue.send({...})``)."""

    def named(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value == "pendingId"

    def offends(node: ast.AST) -> bool:
        if isinstance(node, ast.Subscript):
            return named(node.slice)
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return False
        first = node.args[0] if node.args else None
        if node.func.attr in ("get", "pop", "setdefault"):
            return first is not None and named(first)
        return node.func.attr in ("send", "send_batch") and isinstance(first, ast.Dict)

    return sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.expr) and offends(n))


def test_no_queue_message_is_read_or_written_by_key() -> None:
    found = []
    for root in SOURCES:
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root.parent).as_posix()
            if relative in NOT_THE_QUEUE_MESSAGE:
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            found += [f"{relative}:{line}" for line in _reads_by_key(tree)]

    assert found == [], "read and write queue messages through NotifyMessage"


def test_the_key_check_sees_a_read_by_key() -> None:
    # guards against a check that cannot fail
    source = (
        'a = message["pendingId"]\n'
        'b = body.get("pendingId", "")\n'
        'queue.send({"pendingId": s, "sessionId": t})\n'
        'c = message["sessionId"]\n'
    )
    assert _reads_by_key(ast.parse(source)) == [1, 2, 3]


def test_the_excluded_reads_are_still_there() -> None:
    # an exclusion whose read is gone would hide a new one in the same file
    for relative in NOT_THE_QUEUE_MESSAGE:
        path = SOURCES[0].parent / relative
        assert _reads_by_key(ast.parse(path.read_text())), relative
