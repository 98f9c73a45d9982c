"""Contract of the Channel port, run against every adapter built here.

Each adapter sits behind a harness that can script its service's next answers
and report what was delivered: the recording channel (scripted in memory), the
webhook channel (a real HTTP server on loopback), the Slack channel (a Slack
Web API on loopback that keeps its messages) and the email channel (SES v2
on moto; failures are scripted through botocore's ``before-call`` event, the
hook botocore's own Stubber uses, and delivered mail is read from moto's SES
backend). The rules come from seed 004: a failed send raises and is never
swallowed, and every retry carries the same idempotency key — and a retry
after a send whose record was lost delivers nothing new wherever the transport
can promise it (Slack); elsewhere it delivers again with the same key.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Protocol

import boto3
import httpx
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from signoff.channels.base import Delivery
from signoff.channels.email import IDEMPOTENCY_HEADER, EmailChannel
from signoff.channels.memory import RecordingChannel
from signoff.channels.notification import idempotency_key, notification_key
from signoff.channels.slack import SlackChannel
from signoff.channels.webhook import WebhookChannel
from signoff.clock import SystemClock
from signoff.errors import SendFailed
from tests.support.aws import mocked_aws
from tests.support.builders import approval_notification
from tests.support.slack_api import FakeSlack
from tests.support.webhook_sink import Reply, WebhookSink

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.channels.base import Channel
    from signoff.channels.notification import Notification

REGION = "us-east-1"
SENDER = "signoff@example.com"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


class Harness(Protocol):
    """One adapter and its (scripted) service."""

    channel: Channel

    def fail_next(self, times: int, *, retryable: bool) -> None:
        """Make the service refuse the next ``times`` sends, transiently or for good."""
        ...

    def delivered(self) -> list[str]:
        """The idempotency keys of the notifications the service accepted, in order."""
        ...

    def carried(self, key: str) -> str:
        """The key the service sees for a send with the channel key ``key``."""
        ...

    # Whether a retry after an unrecorded send delivers nothing new (the README's table).
    dedupes_unrecorded: bool


class RecordingHarness:
    dedupes_unrecorded = False

    def __init__(self) -> None:
        self._failures: list[bool] = []
        self.channel = RecordingChannel("recorder", fail_with=self._script)

    def _script(self, notification: Notification, key: str) -> SendFailed | None:
        if not self._failures:
            return None
        retryable = self._failures.pop(0)
        return SendFailed("x", "scripted", retryable=retryable, status=503 if retryable else 400)

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self._failures += [retryable] * times

    def delivered(self) -> list[str]:
        return self.channel.keys()

    def carried(self, key: str) -> str:
        return key


class WebhookHarness:
    dedupes_unrecorded = False  # the receiver drops the repeated webhook-id

    def __init__(self, sink: WebhookSink, http: httpx.Client) -> None:
        self.sink = sink
        self.channel = WebhookChannel(
            "hook", sink.url(), SECRET, client=http, allow_private=True, clock=SystemClock()
        )

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self.sink.script(*[Reply(503 if retryable else 400)] * times)

    def delivered(self) -> list[str]:
        return [
            e.request.headers["webhook-id"]
            for e in self.sink.exchanges
            if 200 <= e.reply.status < 300
        ]

    def carried(self, key: str) -> str:
        return key  # webhook-id; Idempotency-Key is tested in the unit tests


class EmailHarness:
    dedupes_unrecorded = False  # SES has no dedupe: at least once

    def __init__(self) -> None:
        # One attempt per call: the contract is about the channel's own retries.
        self.client = boto3.client(
            "sesv2", region_name=REGION, config=Config(retries={"total_max_attempts": 1})
        )
        self.client.create_email_identity(EmailIdentity=SENDER)
        self.channel = EmailChannel(
            "mail", ["ops@example.com"], SENDER, client=self.client, approvers=[]
        )
        self._failures: list[bool] = []
        self._keys: list[str] = []
        self.client.meta.events.register("before-call.sesv2.SendEmail", self._before_call)

    def _before_call(self, params: dict[str, Any], **_: Any) -> Any:
        # ``params`` is the serialised request: its body is the JSON SES receives.
        if not self._failures:
            headers = json.loads(params["body"])["Content"]["Simple"]["Headers"]
            self._keys += [h["Value"] for h in headers if h["Name"] == IDEMPOTENCY_HEADER]
            return None  # on to moto
        if self._failures.pop(0):
            status, code = 429, "TooManyRequestsException"
        else:
            status, code = 400, "BadRequestException"
        error = {"Code": code, "Message": "scripted"}
        return AWSResponse(None, status, {}, None), {  # type: ignore[arg-type]
            "Error": error,
            "ResponseMetadata": {"HTTPStatusCode": status},
        }

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self._failures += [retryable] * times

    def delivered(self) -> list[str]:
        sent = ses_backends[DEFAULT_ACCOUNT_ID][REGION].sent_messages
        assert len(sent) == len(self._keys)  # moto saw exactly the sends we let through
        return list(self._keys)

    def carried(self, key: str) -> str:
        # the header carries the seed's key of the notification
        return notification_key(key, run_id="run-1", channel=self.channel.name)


class SlackHarness:
    dedupes_unrecorded = True  # the hidden marker, found in the channel's history

    def __init__(self, fake: FakeSlack, http: httpx.Client) -> None:
        self.fake = fake
        self.channel = SlackChannel(
            "slack", "C0123ABCD", "xoxb-test", client=http, base_url=fake.url
        )

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self.fake.fail_next(times, retryable=retryable)

    def delivered(self) -> list[str]:
        return self.fake.markers()

    def carried(self, key: str) -> str:
        return key


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5.0) as client:
        yield client


@pytest.fixture(params=["recording", "webhook", "slack", "email"])
def harness(
    request: pytest.FixtureRequest, http: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Harness]:
    if request.param == "recording":
        yield RecordingHarness()
    elif request.param == "webhook":
        sink = WebhookSink()
        sink.start()
        try:
            yield WebhookHarness(sink, http)
        finally:
            sink.close()
    elif request.param == "slack":
        with FakeSlack() as fake:
            yield SlackHarness(fake, http)
    else:
        with mocked_aws(monkeypatch):
            yield EmailHarness()


approval = approval_notification


def key_for(harness: Harness, pending: str = "p1") -> str:
    return idempotency_key("run-1", pending, harness.channel.name)


def test_a_send_is_delivered_once_with_its_key(harness: Harness) -> None:
    # Given a working service; when one notification is sent
    key = key_for(harness)
    delivery = harness.channel.notify(approval(), key)

    # Then it arrived once, carrying its key, and a receipt came back
    assert harness.delivered() == [harness.carried(key)]
    assert delivery.receipt is not None


def test_a_transient_failure_raises_and_the_retry_carries_the_same_key(harness: Harness) -> None:
    # Given a service that fails the next send transiently
    key = key_for(harness)
    harness.fail_next(1, retryable=True)

    # When the send fails, it raises a retryable error naming the channel
    with pytest.raises(SendFailed) as failed:
        harness.channel.notify(approval(), key)
    assert failed.value.retryable is True
    assert failed.value.channel == harness.channel.name
    assert harness.delivered() == []

    # And the retry (the same logical notification) is delivered with the same key
    harness.channel.notify(approval(), key)
    assert harness.delivered() == [harness.carried(key)]


def test_a_permanent_failure_raises_not_retryable(harness: Harness) -> None:
    harness.fail_next(1, retryable=False)

    with pytest.raises(SendFailed) as failed:
        harness.channel.notify(approval(), key_for(harness))

    assert failed.value.retryable is False
    assert failed.value.channel == harness.channel.name
    assert harness.delivered() == []


@pytest.mark.parametrize("retryable", [True, False])
def test_failures_are_never_swallowed(harness: Harness, retryable: bool) -> None:
    # Given a service that refuses three sends in a row
    harness.fail_next(3, retryable=retryable)
    key = key_for(harness)

    # Then every one of them raises: none passes as delivered
    for _ in range(3):
        with pytest.raises(SendFailed):
            harness.channel.notify(approval(), key)
    assert harness.delivered() == []

    # And the next one that the service accepts is delivered
    harness.channel.notify(approval(), key)
    assert harness.delivered() == [harness.carried(key)]


def test_different_notifications_keep_their_own_keys(harness: Harness) -> None:
    first, second = key_for(harness, "p1"), key_for(harness, "p2")

    harness.channel.notify(approval("p1"), first)
    harness.channel.notify(approval("p2"), second)

    assert harness.delivered() == [harness.carried(first), harness.carried(second)]


def test_a_crash_between_the_send_and_its_record(harness: Harness) -> None:
    # Given a send the service accepted, whose receipt was never recorded
    key = key_for(harness)
    harness.channel.notify(approval(), key)

    # When the retry is told only that an earlier attempt left no receipt
    unrecorded = Delivery(unconfirmed_since=time.time() - 5)
    harness.channel.notify(approval(), key, previous=unrecorded)

    # Then nothing new arrives where the transport can promise it; elsewhere the
    # copy carries the same key, for the receiver to drop
    expected = 1 if harness.dedupes_unrecorded else 2
    assert harness.delivered() == [harness.carried(key)] * expected
