"""The webhook channel against a real HTTP server on loopback: signature, headers, refusals."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import TYPE_CHECKING

import httpx
import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from signoff.channels.build import BuildContext
from signoff.channels.config import SecretRef
from signoff.channels.notification import idempotency_key
from signoff.channels.settings.webhook import WebhookSettings
from signoff.channels.webhook import (
    Resolver,
    WebhookChannel,
    resolve_host,
    signing_key,
    whsec_form,
)
from signoff.clock import ManualClock
from signoff.errors import SecretMissing, SendFailed, StoreUnavailable
from signoff.secrets.memory import MemorySecrets
from tests.support.aws import free_port
from tests.support.builders import approval_notification, question_notification
from tests.support.webhook_sink import Reply, WebhookSink
from tests.support.webhook_sink import webhook_sink as webhook_sink

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

SECRET = "whsec_" + base64.b64encode(b"a-32-byte-signing-key-for-tests!").decode()
KEY = "run-1:p1:hook"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=2.0) as client:
        yield client


@pytest.fixture
def clock() -> ManualClock:
    # The receiver checks the timestamp against its own clock (5 minutes either way).
    return ManualClock(datetime.now(UTC).replace(microsecond=0))


approval = approval_notification
question = question_notification


def resolving_to(*addresses: str) -> Resolver:
    """A resolver that answers every name with ``addresses`` (a DNS we control)."""

    def resolve(host: str, port: int) -> Sequence[str]:
        return list(addresses)

    return resolve


def make(
    url: str,
    http: httpx.Client,
    clock: ManualClock,
    *,
    secret: str = SECRET,
    allow_private: bool = True,
    resolver: Resolver = resolve_host,
) -> WebhookChannel:
    return WebhookChannel(
        "hook",
        url,
        secret,
        client=http,
        allow_private=allow_private,
        clock=clock,
        resolver=resolver,
    )


def send_failure(hook: WebhookChannel) -> SendFailed:
    """The ``SendFailed`` that sending the approval through ``hook`` raises."""
    with pytest.raises(SendFailed) as failed:
        hook.notify(approval(), KEY)
    return failed.value


# --- signature and body -----------------------------------------------------------------


def test_the_signature_verifies_with_the_standardwebhooks_library(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    make(webhook_sink.url(), http, clock).notify(approval(), KEY)

    [request] = webhook_sink.received
    payload = Webhook(SECRET).verify(request.body, request.headers)
    assert payload == approval().wire()


def test_a_tampered_body_does_not_verify(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    make(webhook_sink.url(), http, clock).notify(approval(), KEY)

    [request] = webhook_sink.received
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(request.body.replace(b"25", b"2500"), request.headers)


def test_headers_are_exactly_the_standard_webhooks_ones(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    make(webhook_sink.url(), http, clock).notify(approval(), KEY)

    [request] = webhook_sink.received
    assert request.method == "POST"
    assert request.path == "/hook"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["webhook-id"] == KEY
    assert request.headers["webhook-timestamp"] == str(int(clock.now().timestamp()))
    version, signature = request.headers["webhook-signature"].split(",")
    assert version == "v1"
    assert len(base64.b64decode(signature, validate=True)) == 32  # HMAC-SHA256
    webhook_headers = {name for name in request.headers if name.startswith("webhook-")}
    assert webhook_headers == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    # The seed's key beside them; nothing carries the secret
    assert request.headers["idempotency-key"] == "run-1:p1"
    assert "authorization" not in request.headers


def test_a_retry_keeps_the_id_and_signs_its_own_timestamp(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    hook = make(webhook_sink.url(), http, clock)
    webhook_sink.script(Reply(503))
    with pytest.raises(SendFailed):
        hook.notify(approval(), KEY)

    clock.advance(30)
    hook.notify(approval(), KEY)

    first, second = webhook_sink.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == KEY
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"] == "run-1:p1"
    assert int(second.headers["webhook-timestamp"]) == int(first.headers["webhook-timestamp"]) + 30
    Webhook(SECRET).verify(second.body, second.headers)


@pytest.mark.parametrize(
    ("subject", "kind", "expected"),
    [
        ("p2", "question", "run-1:p2"),
        ("stuck:p1:3", "stuck", "run-1:p1:stuck:3"),
        ("run:run-1:run_finish", "result", "run-1:result"),
        ("run:run-1:run_start", "info", "run-1:run_start"),
        ("run:run-1:run_start:p1", "info", "run-1:run_start:p1"),
        ("stalled:s1:run-1", "stuck", "run-1:stalled"),
    ],
)
def test_each_kind_has_its_own_stable_idempotency_key(
    webhook_sink: WebhookSink,
    http: httpx.Client,
    clock: ManualClock,
    subject: str,
    kind: str,
    expected: str,
) -> None:
    hook = make(webhook_sink.url(), http, clock)
    notification = approval().model_copy(update={"kind": kind})
    channel_key = idempotency_key("run-1", subject, "hook")
    webhook_sink.script(Reply(500))
    with pytest.raises(SendFailed):
        hook.notify(notification, channel_key)
    hook.notify(notification, channel_key)

    first, second = webhook_sink.received
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"] == expected
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == channel_key


def test_a_key_of_another_shape_is_sent_as_it_is(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    make(webhook_sink.url(), http, clock).notify(approval(), "chosen-by-the-caller")

    [request] = webhook_sink.received
    assert request.headers["idempotency-key"] == "chosen-by-the-caller"


def test_the_body_carries_the_links_a_receiver_acts_on(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    hook = make(webhook_sink.url(), http, clock)
    hook.notify(approval(), KEY)
    hook.notify(question(), "run-1:p2:hook")

    sent_approval, sent_question = (json.loads(r.body) for r in webhook_sink.received)
    assert sent_approval["approveUrl"] == approval().approve_url
    assert sent_approval["denyUrl"] == approval().deny_url
    assert sent_approval["linkUrl"] == approval().link_url
    assert sent_approval["args"] == {"orderId": "A-17", "amount": 25}
    assert sent_approval["runId"] == "run-1"
    assert sent_question["answerUrl"] == question().answer_url
    assert sent_question["options"] == ["A-17", "A-18"]
    assert "approveUrl" not in sent_question  # absent fields are left out


def test_a_raw_secret_is_keyed_by_its_utf8_bytes(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    raw = "a plain shared secret, not whsec_"
    make(webhook_sink.url(), http, clock, secret=raw).notify(approval(), KEY)

    [request] = webhook_sink.received
    assert signing_key(raw) == raw.encode()
    Webhook(whsec_form(raw)).verify(request.body, request.headers)
    Webhook(raw.encode()).verify(request.body, request.headers)


# --- status codes and transport failures -------------------------------------------------


def test_a_redirect_is_not_followed(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    webhook_sink.script(Reply(302, {"Location": webhook_sink.url("/elsewhere")}))

    failure = send_failure(make(webhook_sink.url(), http, clock))

    assert failure.retryable is False
    assert failure.status == 302
    assert "redirects are not followed" in failure.reason
    assert [r.path for r in webhook_sink.received] == ["/hook"]


def test_a_client_that_follows_redirects_still_does_not_here(
    webhook_sink: WebhookSink, clock: ManualClock
) -> None:
    webhook_sink.script(Reply(307, {"Location": webhook_sink.url("/elsewhere")}))

    with (
        httpx.Client(timeout=2.0, follow_redirects=True) as following,
        pytest.raises(SendFailed),
    ):
        make(webhook_sink.url(), following, clock).notify(approval(), KEY)

    assert [r.path for r in webhook_sink.received] == ["/hook"]


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        # transient: 408, 429 and 5xx
        *((status, True) for status in (408, 429, 500, 502, 503, 504)),
        # every other client error is permanent
        *((status, False) for status in (400, 401, 403, 404, 410, 413, 422)),
    ],
)
def test_only_transient_statuses_are_retryable(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock, status: int, retryable: bool
) -> None:
    webhook_sink.script(Reply(status))

    failure = send_failure(make(webhook_sink.url(), http, clock))

    assert failure.retryable is retryable
    assert failure.status == status


@pytest.mark.parametrize("status", [200, 201, 202, 204])
def test_any_2xx_is_a_delivery(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock, status: int
) -> None:
    webhook_sink.script(Reply(status, body=b"ok" if status != 204 else b""))

    make(webhook_sink.url(), http, clock).notify(approval(), KEY)


def test_retry_after_seconds_is_passed_on(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    webhook_sink.script(Reply(429, {"Retry-After": "7"}))

    failure = send_failure(make(webhook_sink.url(), http, clock))

    assert failure.retryable is True
    assert failure.retry_after == 7.0


def test_retry_after_as_a_date_is_measured_on_the_channels_clock(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    later = clock.now() + timedelta(seconds=120)
    webhook_sink.script(Reply(503, {"Retry-After": format_datetime(later, usegmt=True)}))

    failure = send_failure(make(webhook_sink.url(), http, clock))

    assert failure.retry_after == pytest.approx(120.0)


def test_a_timeout_is_retryable(webhook_sink: WebhookSink, clock: ManualClock) -> None:
    webhook_sink.script(Reply(204, delay=1.0))

    with httpx.Client(timeout=0.2) as impatient, pytest.raises(SendFailed) as failed:
        make(webhook_sink.url(), impatient, clock).notify(approval(), KEY)

    assert failed.value.retryable is True
    assert "timed out" in failed.value.reason


def test_nothing_listening_is_retryable(http: httpx.Client, clock: ManualClock) -> None:
    failure = send_failure(make(f"http://127.0.0.1:{free_port()}/hook", http, clock))

    assert failure.retryable is True
    assert failure.__cause__ is not None  # translated here, chained for the logs


# --- private targets at send time --------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        # localhost really resolves to 127.0.0.1 here; the channel asks the system resolver
        "localhost",
        # a literal address is checked at send too
        "127.0.0.1",
    ],
)
def test_a_loopback_target_is_refused_before_any_request(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock, host: str
) -> None:
    hook = make(f"https://{host}:{webhook_sink.port}/hook", http, clock, allow_private=False)

    failure = send_failure(hook)

    assert failure.retryable is False
    assert "127.0.0.1 is a loopback address" in failure.reason
    assert webhook_sink.received == []


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.8",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",
        "::1",
        "fe80::1",
        "fd00::1",
        "::ffff:127.0.0.1",
        "0.0.0.0",
        "100.64.0.1",
    ],
)
def test_a_name_resolving_to_any_private_address_is_refused(
    http: httpx.Client, clock: ManualClock, address: str
) -> None:
    hook = make(
        "https://hooks.example.test/x",
        http,
        clock,
        allow_private=False,
        resolver=resolving_to("93.184.215.14", address),
    )

    failure = send_failure(hook)

    assert failure.retryable is False
    assert "refused" in failure.reason


def test_plain_http_is_refused_for_a_public_target(http: httpx.Client, clock: ManualClock) -> None:
    hook = make(
        "http://hooks.example.test/x",
        http,
        clock,
        allow_private=False,
        resolver=resolving_to("93.184.215.14"),
    )

    failure = send_failure(hook)

    assert failure.retryable is False
    assert "https" in failure.reason


def test_allowed_private_targets_are_reached_at_the_checked_address(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    # Given a name our resolver maps to loopback, and private targets allowed
    hook = make(
        f"http://hooks.example.test:{webhook_sink.port}/hook",
        http,
        clock,
        resolver=resolving_to("127.0.0.1"),
    )

    hook.notify(approval(), KEY)

    # Then the request went to the resolved address, under the name it was given
    [request] = webhook_sink.received
    assert request.headers["host"] == f"hooks.example.test:{webhook_sink.port}"
    Webhook(SECRET).verify(request.body, request.headers)


def test_https_to_the_checked_address_still_verifies_the_name(clock: ManualClock) -> None:
    # Given an HTTPS receiver whose certificate is for hooks.example.test only
    sink = WebhookSink(tls="hooks.example.test")
    sink.start()
    try:
        with httpx.Client(timeout=2.0, verify=sink.trust()) as trusting:
            hook = make(
                f"https://hooks.example.test:{sink.port}/hook",
                trusting,
                clock,
                resolver=resolving_to("127.0.0.1"),
            )

            # When the channel connects to 127.0.0.1, SNI and the certificate check use the name
            hook.notify(approval(), KEY)

            # And a name the certificate does not cover is refused by TLS, retryably
            other = make(
                f"https://other.example.test:{sink.port}/hook",
                trusting,
                clock,
                resolver=resolving_to("127.0.0.1"),
            )
            failure = send_failure(other)
    finally:
        sink.close()

    [request] = sink.received
    assert request.headers["host"] == f"hooks.example.test:{sink.port}"
    Webhook(SECRET).verify(request.body, request.headers)
    assert failure.retryable is True


def test_an_unreachable_address_falls_back_to_the_next(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    # 127.0.0.2 answers nothing on this port; 127.0.0.1 is the sink
    hook = make(
        f"http://hooks.example.test:{webhook_sink.port}/hook",
        http,
        clock,
        resolver=resolving_to("127.0.0.2", "127.0.0.1"),
    )

    hook.notify(approval(), KEY)

    assert len(webhook_sink.received) == 1


def test_a_name_that_does_not_resolve_is_retryable(http: httpx.Client, clock: ManualClock) -> None:
    def broken(host: str, port: int) -> Sequence[str]:
        raise OSError("temporary failure in name resolution")

    hook = make("https://hooks.example.test/x", http, clock, resolver=broken)

    failure = send_failure(hook)

    assert failure.retryable is True


# --- the secret --------------------------------------------------------------------------


def settings(url: str) -> WebhookSettings:
    return WebhookSettings(
        type="webhook", url=url, secret=SecretRef(secret="webhook-signing"), allow_private=True
    )


def test_from_config_reads_the_secret_at_each_send(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    secrets = MemorySecrets({"webhook-signing": SECRET})
    hook = WebhookChannel.from_config(
        settings(webhook_sink.url()),
        BuildContext(secrets=secrets, clock=clock, client=http),
        name="ops",
    )
    hook.notify(approval(), KEY)

    rotated = "whsec_" + base64.b64encode(b"the-next-signing-key-after-rotat").decode()
    secrets.set("webhook-signing", rotated)
    hook.notify(approval(), KEY)

    first, second = webhook_sink.received
    assert hook.name == "ops"
    Webhook(SECRET).verify(first.body, first.headers)
    Webhook(rotated).verify(second.body, second.headers)


def test_a_missing_secret_is_a_permanent_failure(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    hook = WebhookChannel.from_config(
        settings(webhook_sink.url()),
        BuildContext(secrets=MemorySecrets(), clock=clock, client=http),
    )

    failure = send_failure(hook)

    assert failure.retryable is False
    assert isinstance(failure.__cause__, SecretMissing)
    assert webhook_sink.received == []


def test_an_unavailable_secret_source_is_retryable(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    def flaky() -> str:
        raise StoreUnavailable("Secrets Manager throttled")

    hook = WebhookChannel(
        "hook", webhook_sink.url(), flaky, client=http, allow_private=True, clock=clock
    )

    failure = send_failure(hook)

    assert failure.retryable is True


@pytest.mark.parametrize("bad", ["whsec_***not base64***", "whsec_", ""])
def test_a_malformed_secret_is_a_permanent_failure(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock, bad: str
) -> None:
    failure = send_failure(make(webhook_sink.url(), http, clock, secret=bad))

    assert failure.retryable is False
    assert "***not base64***" not in failure.reason  # a value is never echoed
    assert webhook_sink.received == []


def test_the_secret_never_appears_in_a_failure(
    webhook_sink: WebhookSink, http: httpx.Client, clock: ManualClock
) -> None:
    webhook_sink.script(Reply(401, body=SECRET.encode()))

    failure = send_failure(make(webhook_sink.url(), http, clock))

    assert SECRET not in str(failure)
