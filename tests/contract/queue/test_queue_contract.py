"""Contract of the Queue port (in memory and SQS), and the notify queue's template settings."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from signoff.errors import StoreUnavailable
from signoff.queue.memory import MemoryQueue
from signoff.queue.sqs import SqsQueue

if TYPE_CHECKING:
    from signoff.queue import BatchQueue, Queue
    from tests.support.aws import AwsResources


@pytest.fixture(params=["memory", "sqs"])
def queue(request: pytest.FixtureRequest) -> BatchQueue:
    if request.param == "memory":
        return MemoryQueue()
    request.getfixturevalue("aws")
    return SqsQueue.from_env()


def receive(queue: Queue) -> list[dict[str, Any]]:
    """Everything on the queue now, taken off it."""
    if isinstance(queue, MemoryQueue):
        return queue.receive(max=10)
    assert isinstance(queue, SqsQueue)
    client = boto3.client("sqs")
    answer = client.receive_message(QueueUrl=queue.url, MaxNumberOfMessages=10)
    messages = answer.get("Messages", [])
    for message in messages:
        client.delete_message(QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"])
    return [json.loads(message["Body"]) for message in messages]


def notification(pending_id: str) -> dict[str, Any]:
    return {"pendingId": pending_id, "channels": ["slack", "email"], "attempt": 1, "ok": True}


def test_what_is_sent_is_received_once(queue: Queue) -> None:
    queue.send(notification("p1"))
    queue.send(notification("p2"))

    received = receive(queue)

    # SQS standard queues do not promise order, so compare as a set of ids
    assert sorted(received, key=lambda body: body["pendingId"]) == [
        notification("p1"),
        notification("p2"),
    ]
    assert receive(queue) == []


def test_a_body_changed_after_sending_is_sent_as_it_was(queue: Queue) -> None:
    body = notification("p1")
    queue.send(body)

    body["channels"].append("lark")

    assert receive(queue) == [notification("p1")]


def test_a_body_that_is_not_json_is_refused_and_nothing_is_sent(queue: Queue) -> None:
    with pytest.raises(TypeError):
        queue.send({"at": object()})

    assert receive(queue) == []


def receive_all(queue: Queue) -> list[dict[str, Any]]:
    """Everything on the queue, ten at a time, until a receive comes back empty."""
    taken: list[dict[str, Any]] = []
    while batch := receive(queue):
        taken += batch
    return taken


def test_a_batch_of_any_length_is_sent_whole(queue: BatchQueue) -> None:
    # more than one SendMessageBatch holds (ten entries each)
    queue.send_batch([{"job": "due", "shard": shard} for shard in range(23)])

    received = receive_all(queue)

    assert sorted(body["shard"] for body in received) == list(range(23))
    assert {body["job"] for body in received} == {"due"}


def test_an_empty_batch_sends_nothing(queue: BatchQueue) -> None:
    queue.send_batch([])

    assert receive(queue) == []


def test_a_batch_with_a_body_that_is_not_json_sends_none_of_it(queue: BatchQueue) -> None:
    with pytest.raises(TypeError):
        queue.send_batch([{"n": 1}, {"at": object()}])

    assert receive(queue) == []


class ScriptedBatches:
    """An SQS client whose ``send_message_batch`` answers what ``answer`` returns."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[list[str]] = []

    def send_message_batch(self, *, QueueUrl: str, Entries: list[Any]) -> Any:
        self.calls.append([entry["Id"] for entry in Entries])
        return self.answer(len(self.calls), Entries)


def test_on_sqs_an_entry_refused_transiently_is_sent_once_more() -> None:
    def answer(call: int, entries: list[Any]) -> dict[str, Any]:
        if call == 1:
            return {
                "Successful": [{"Id": e["Id"]} for e in entries[1:]],
                "Failed": [{"Id": "0", "Code": "InternalError", "SenderFault": False}],
            }
        return {"Successful": [{"Id": e["Id"]} for e in entries], "Failed": []}

    client = ScriptedBatches(answer)

    SqsQueue("https://sqs/q", client).send_batch([{"n": n} for n in range(3)])  # type: ignore[arg-type]

    assert client.calls == [["0", "1", "2"], ["0"]]


def test_on_sqs_an_entry_still_refused_becomes_store_unavailable_naming_it() -> None:
    def answer(call: int, entries: list[Any]) -> dict[str, Any]:
        return {
            "Successful": [],
            "Failed": [
                {"Id": e["Id"], "Code": "Throttled", "SenderFault": e["Id"] == "1"} for e in entries
            ],
        }

    client = ScriptedBatches(answer)

    with pytest.raises(StoreUnavailable, match="0 of 2") as refused:
        SqsQueue("https://sqs/q", client).send_batch([{"n": 1}, {"n": 2}])  # type: ignore[arg-type]

    # the sender's fault is not retried; the transient one is, once
    assert client.calls == [["0", "1"], ["0"]]
    assert "1: Throttled" in str(refused.value) and "0: Throttled" in str(refused.value)


def test_on_sqs_a_missing_queue_refuses_a_batch_as_store_unavailable(aws: AwsResources) -> None:
    missing = aws.queues["NotifyQueue"].replace("NotifyQueue", "NoSuchQueue")

    with pytest.raises(StoreUnavailable):
        SqsQueue(missing, boto3.client("sqs")).send_batch([{"n": 1}])


def test_the_memory_queue_hands_out_at_most_max_oldest_first() -> None:
    queue = MemoryQueue()
    for number in range(5):
        queue.send({"n": number})

    assert queue.receive(max=2) == [{"n": 0}, {"n": 1}]
    assert queue.receive() == [{"n": 2}, {"n": 3}, {"n": 4}]


def test_on_sqs_a_missing_queue_becomes_store_unavailable(aws: AwsResources) -> None:
    missing = aws.queues["NotifyQueue"].replace("NotifyQueue", "NoSuchQueue")
    queue = SqsQueue(missing, boto3.client("sqs"))

    with pytest.raises(StoreUnavailable):
        queue.send(notification("p1"))


def test_the_notify_queue_redrives_to_its_dead_letter_queue(aws: AwsResources) -> None:
    client = boto3.client("sqs")

    attributes = client.get_queue_attributes(
        QueueUrl=aws.environment["SIGNOFF_NOTIFY_QUEUE_URL"], AttributeNames=["All"]
    )["Attributes"]
    dead_letter = client.get_queue_attributes(
        QueueUrl=aws.queues["NotifyDeadLetterQueue"], AttributeNames=["All"]
    )["Attributes"]

    assert json.loads(attributes["RedrivePolicy"]) == {
        "deadLetterTargetArn": aws.queue_arns["NotifyDeadLetterQueue"],
        "maxReceiveCount": 5,
    }
    # six times the notifier's 30 s timeout; the dead letters are kept 14 days
    assert attributes["VisibilityTimeout"] == "180"
    assert dead_letter["MessageRetentionPeriod"] == str(14 * 24 * 3600)
