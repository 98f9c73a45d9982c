"""Contract of the Channel port, run against every adapter built here.

The checks are ``signoff.testing``'s (``CHANNEL_CHECKS``), importable by a
third-party channel; this module supplies the harnesses of the built-in ones.

Each adapter sits behind a harness that can script its service's next answers
and report what was delivered: the recording channel (scripted in memory), the
webhook channel (a real HTTP server on loopback), the Slack channel (a Slack
Web API on loopback that keeps its messages), the GitHub channel (a GitHub REST
API on loopback that keeps one issue's comments), the Lark channel (a Lark Open
API on loopback that issues tenant tokens and honours the send's ``uuid`` as
Lark does: one message per uuid within its hour), the OpenClaw channel (a
gateway's hooks endpoint on loopback that checks the hook token and answers a
repeated ``Idempotency-Key`` and body within its replay window with the first
run, as the gateway does), the email channel (SES v2
on moto; failures are scripted through botocore's ``before-call`` event, the
hook botocore's own Stubber uses, and delivered mail is read from moto's SES
backend), and the console channel (a stream whose ``write`` raises the
scripted ``OSError``: EAGAIN, or EPIPE for good). The rules come from seed
004: a failed send raises and is never swallowed, and every retry carries the
same idempotency key — and a retry after a send whose record was lost
delivers nothing new wherever the transport can promise it (Slack, GitHub,
Lark, OpenClaw within its replay window); elsewhere (webhook, email, console)
it delivers again with the same key.
"""

from __future__ import annotations

import errno
import io
import json
import re
from typing import TYPE_CHECKING, Any

import boto3
import httpx
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from signoff.channels.base import Delivery
from signoff.channels.console import ConsoleChannel
from signoff.channels.email import IDEMPOTENCY_HEADER, EmailChannel
from signoff.channels.github.channel import GitHubChannel
from signoff.channels.lark.channel import LarkChannel, lark_uuid
from signoff.channels.memory import RecordingChannel
from signoff.channels.notification import idempotency_key, notification_key
from signoff.channels.openclaw import OpenClawChannel
from signoff.channels.slack.channel import SlackChannel
from signoff.channels.webhook import WebhookChannel
from signoff.clock import SystemClock
from signoff.errors import SendFailed
from signoff.testing import CHANNEL_CHECKS, ChannelHarness, sample_approval
from tests.support.aws import mocked_aws
from tests.support.github_api import FakeGitHub
from tests.support.lark_api import DEDUPE_WINDOW, FakeLark
from tests.support.openclaw_gateway import FakeOpenClaw
from tests.support.slack_api import FakeSlack
from tests.support.webhook_sink import Reply, WebhookSink

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from signoff.channels.notification import Notification

REGION = "us-east-1"
SENDER = "signoff@example.com"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


Harness = ChannelHarness


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


class GitHubHarness:
    dedupes_unrecorded = True  # the hidden marker, found in the comments

    def __init__(self, fake: FakeGitHub, http: httpx.Client) -> None:
        self.fake = fake
        self.channel = GitHubChannel(
            "github",
            "acme/payments",
            42,
            "ghs_test",
            client=http,
            clock=SystemClock(),
            api_url=fake.url,
            allow_private=True,
        )

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self.fake.fail_next(times, retryable=retryable)

    def delivered(self) -> list[str]:
        return self.fake.markers()

    def carried(self, key: str) -> str:
        return key


class LarkHarness:
    dedupes_unrecorded = True  # Lark's uuid: one message per uuid within its hour

    def __init__(self, fake: FakeLark, http: httpx.Client) -> None:
        self.fake = fake
        self.channel = LarkChannel(
            "lark",
            "oc_test",
            "cli_test",
            "secret-test",
            client=http,
            clock=SystemClock(),
            base_url=fake.url,
        )

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self.fake.fail_next(times, retryable=retryable)

    def delivered(self) -> list[str]:
        return self.fake.uuids()

    def carried(self, key: str) -> str:
        return lark_uuid(key)


class OpenClawHarness:
    # The gateway's replay cache: the same token, Idempotency-Key and body within
    # its window (5 minutes, in memory) answers the first run and starts none.
    dedupes_unrecorded = True

    def __init__(self, fake: FakeOpenClaw, http: httpx.Client) -> None:
        self.fake = fake
        self.channel = OpenClawChannel(
            "openclaw",
            fake.url,
            "hook-secret",
            client=http,
            clock=SystemClock(),
            allow_private=True,
        )

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self.fake.fail_next(times, retryable=retryable)

    def delivered(self) -> list[str]:
        return [key or "" for key in self.fake.run_keys()]

    def carried(self, key: str) -> str:
        # the Idempotency-Key carries the seed's key of the notification
        return notification_key(key, run_id="run-1", channel=self.channel.name)


class _Stream(io.StringIO):
    """A text stream whose next writes raise the scripted ``OSError``s (a full or closed pipe)."""

    def __init__(self) -> None:
        super().__init__()
        self.failures: list[bool] = []

    def write(self, text: str, /) -> int:
        if self.failures:
            if self.failures.pop(0):
                raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")
        return super().write(text)


class ConsoleHarness:
    dedupes_unrecorded = False  # a console cannot take a line back: the key printed again

    def __init__(self) -> None:
        self.stream = _Stream()
        self.channel = ConsoleChannel("console", self.stream)

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self.stream.failures += [retryable] * times

    def delivered(self) -> list[str]:
        # each line ends with "(key)" (links: false)
        lines = self.stream.getvalue().splitlines()
        return [m.group(1) for line in lines if (m := re.search(r"\((\S+)\)$", line))]

    def carried(self, key: str) -> str:
        return key


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5.0) as client:
        yield client


@pytest.fixture(
    params=["recording", "webhook", "slack", "github", "lark", "openclaw", "email", "console"]
)
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
    elif request.param == "github":
        with FakeGitHub("acme/payments", 42) as github:
            yield GitHubHarness(github, http)
    elif request.param == "lark":
        with FakeLark() as lark:
            yield LarkHarness(lark, http)
    elif request.param == "openclaw":
        with FakeOpenClaw("hook-secret") as gateway:
            yield OpenClawHarness(gateway, http)
    elif request.param == "console":
        yield ConsoleHarness()
    else:
        with mocked_aws(monkeypatch):
            yield EmailHarness()


@pytest.mark.parametrize("check", CHANNEL_CHECKS.values(), ids=CHANNEL_CHECKS.keys())
def test_channel_contract(harness: Harness, check: Callable[[Harness], None]) -> None:
    # The checks of signoff.testing, which a third-party channel runs the same way.
    check(harness)


def test_lark_dedupe_is_the_service_s_uuid_then_the_recorded_message_id(
    http: httpx.Client,
) -> None:
    # The conformance check's "one message" is Lark's doing: the resend reaches the
    # API and is answered with the first message; past the hour only the receipt helps.
    clock = [1_000_000.0]
    with FakeLark(now=lambda: clock[0]) as fake:
        channel = LarkHarness(fake, http).channel
        key = idempotency_key("run-1", "p1", "lark")
        first = channel.notify(sample_approval(), key)
        again = channel.notify(sample_approval(), key, previous=Delivery(unconfirmed_since=1.0))
        assert (fake.sends(), fake.uuids()) == (2, [lark_uuid(key)])
        assert again.receipt == first.receipt
        clock[0] += DEDUPE_WINDOW
        assert channel.notify(sample_approval(), key, previous=first) is first
        assert fake.sends() == 2  # the recorded message id: no request at all
        channel.notify(sample_approval(), key, previous=Delivery(unconfirmed_since=1.0))
        assert fake.uuids() == [lark_uuid(key)] * 2  # unrecorded past the hour: a copy
