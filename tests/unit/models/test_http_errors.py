"""One classification of HTTP failures for every adapter that speaks HTTP (signoff.http_errors).

A model provider and a notification channel that get the same answer agree on
whether another attempt can help; httpx's exceptions map to the same verdicts.
"""

from __future__ import annotations

import httpx
import pytest

from signoff.channels.notification import Notification
from signoff.channels.slack.channel import SlackChannel
from signoff.channels.webhook import WebhookChannel
from signoff.clock import ManualClock
from signoff.errors import ModelError, ModelUnavailable, SendFailed
from signoff.http_errors import RETRYABLE, map_httpx_errors, retry_after
from signoff.messages import ModelRequest, UserMessage
from signoff.models.openai import OpenAIChat

NOTE = Notification(
    kind="approval", agent="helper", run_id="r1", title="Refund?", body="{}", pending_id="p1"
)
REQUEST = ModelRequest(system="", messages=(UserMessage(content="hi"),))
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
STATUSES = (400, 401, 404, 408, 409, 413, 422, 429, 500, 501, 502, 503, 504, 505, 529)


def answering(status: int) -> httpx.MockTransport:
    return httpx.MockTransport(
        lambda request: httpx.Response(status, json={"error": {"message": "no"}})
    )


@pytest.mark.parametrize("status", STATUSES)
def test_models_and_channels_retry_the_same_statuses(status: int) -> None:
    expected = status in RETRYABLE
    model = OpenAIChat.from_settings(model="m", transport=answering(status))
    client = httpx.Client(transport=answering(status))
    webhook = WebhookChannel(
        "hook",
        "http://127.0.0.1:9/h",
        SECRET,
        client=client,
        allow_private=True,
        clock=ManualClock(),
    )
    slack = SlackChannel("chat", "C1", "xoxb-1", client=client, base_url="http://127.0.0.1:9/api")

    with pytest.raises(ModelError) as model_failed:
        model(REQUEST)
    with pytest.raises(SendFailed) as webhook_failed:
        webhook.notify(NOTE, "r1:p1:hook")
    with pytest.raises(SendFailed) as slack_failed:
        slack.notify(NOTE, "r1:p1:chat")

    assert isinstance(model_failed.value, ModelUnavailable) is expected
    assert webhook_failed.value.retryable is expected
    assert slack_failed.value.retryable is expected


def test_the_retryable_statuses() -> None:
    assert {408, 429, 500, 502, 503, 504, 529} <= RETRYABLE
    assert RETRYABLE.isdisjoint({400, 401, 403, 404, 409, 413, 422})


def _raising(exc: Exception) -> None:
    def fail(reason: str, retryable: bool) -> SendFailed:
        return SendFailed("c", reason, retryable=retryable)

    with map_httpx_errors(fail):
        raise exc


REQ = httpx.Request("POST", "https://x.example")


@pytest.mark.parametrize(
    ("exc", "retryable", "reason"),
    [
        (httpx.ReadTimeout("slow", request=REQ), True, "timed out"),
        (httpx.ConnectTimeout("slow", request=REQ), True, "timed out"),
        (httpx.ConnectError("refused", request=REQ), True, "failed in transit (ConnectError)"),
        (httpx.ReadError("reset", request=REQ), True, "failed in transit (ReadError)"),
        (httpx.RemoteProtocolError("eof", request=REQ), True, "failed in transit"),
        (httpx.ProxyError("proxy", request=REQ), True, "failed in transit (ProxyError)"),
        (httpx.UnsupportedProtocol("ftp", request=REQ), False, "could not be sent"),
        (httpx.TooManyRedirects("loop", request=REQ), False, "could not be sent"),
        (httpx.DecodingError("gzip", request=REQ), False, "could not be sent"),
    ],
)
def test_httpx_errors_map_to_one_verdict(exc: Exception, retryable: bool, reason: str) -> None:
    with pytest.raises(SendFailed) as failed:
        _raising(exc)

    assert failed.value.retryable is retryable
    assert reason in failed.value.reason
    assert failed.value.__cause__ is exc


def test_other_errors_pass_through() -> None:
    with pytest.raises(KeyError):
        _raising(KeyError("x"))


@pytest.mark.parametrize(
    ("headers", "header", "expected"),
    [
        ({"x-ogw-ratelimit-reset": "12"}, "x-ogw-ratelimit-reset", 12.0),
        ({"retry-after": "inf"}, "retry-after", None),
        ({"retry-after": "nan"}, "retry-after", None),
        ({"retry-after-ms": "soon", "retry-after": "3"}, "retry-after", 3.0),
    ],
)
def test_retry_after_reads_a_named_header_and_refuses_non_numbers(
    headers: dict[str, str], header: str, expected: float | None
) -> None:
    assert retry_after(headers, header=header) == expected
