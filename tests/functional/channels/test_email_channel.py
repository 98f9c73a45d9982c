"""The email channel on moto's SES v2: both parts, escaping, and only the safe link.

Moto keeps a sent mail's subject, HTML body and recipients; the text part and
the headers are read from the request itself, captured through botocore's
``before-call`` event (the serialised JSON SES would receive).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from signoff.channels.base import Delivery
from signoff.channels.build import BuildContext
from signoff.channels.email import (
    IDEMPOTENCY_HEADER,
    IDEMPOTENCY_TAG,
    EmailChannel,
    render,
    tag_value,
)
from signoff.channels.settings.email import EmailSettings
from signoff.errors import SendFailed
from signoff.secrets.memory import MemorySecrets
from tests.support.aws import mocked_aws
from tests.support.builders import (
    answer_url,
    approval_notification,
    approve_url,
    deny_url,
    link_url,
    question_notification,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.channels.notification import Notification

REGION = "us-east-1"
SENDER = "signoff@example.com"
KEY = "run-1:p1:mail"  # the channel's key; the seed's key of the notification is "run-1:p1"
SEED_KEY = "run-1:p1"
LINK = link_url("token-1")
APPROVE = approve_url("p1", "token-1")
DENY = deny_url("p1", "token-1")
ANSWER = answer_url("p2", "token-2")
URL = re.compile(r"https?://[^\s\"'<>]+")


class Ses:
    """Moto's SES v2 with a client whose requests are captured and can be made to fail."""

    def __init__(self) -> None:
        self.client = boto3.client(
            "sesv2", region_name=REGION, config=Config(retries={"total_max_attempts": 1})
        )
        self.client.create_email_identity(EmailIdentity=SENDER)
        self.requests: list[dict[str, Any]] = []
        self.failures: list[tuple[int, str] | Exception] = []
        self.client.meta.events.register("before-call.sesv2.SendEmail", self._before_call)

    def _before_call(self, params: dict[str, Any], **_: Any) -> Any:
        self.requests.append(json.loads(params["body"]))
        if not self.failures:
            return None
        failure = self.failures.pop(0)
        if isinstance(failure, Exception):
            raise failure
        status, code = failure
        return AWSResponse(None, status, {}, None), {  # type: ignore[arg-type]
            "Error": {"Code": code, "Message": "scripted"},
            "ResponseMetadata": {"HTTPStatusCode": status},
        }

    @property
    def sent(self) -> list[Any]:
        return list(ses_backends[DEFAULT_ACCOUNT_ID][REGION].sent_messages)

    def channel(self, sender: str = SENDER) -> EmailChannel:
        return EmailChannel(
            "mail", ["ops@example.com"], sender, client=self.client, approvers=["Ops@example.com"]
        )


@pytest.fixture
def ses(monkeypatch: pytest.MonkeyPatch) -> Iterator[Ses]:
    with mocked_aws(monkeypatch):
        yield Ses()


approval = approval_notification


def question() -> Notification:
    # Options with markup: the HTML part must escape them.
    return question_notification(
        title="A question from customer-service",
        body="The agent asks:",
        question="Refund to card or store credit?",
        options=["card", "store credit <b>"],
    )


def parts(request: dict[str, Any]) -> tuple[str, str, str]:
    simple = request["Content"]["Simple"]
    return simple["Subject"]["Data"], simple["Body"]["Text"]["Data"], simple["Body"]["Html"]["Data"]


def test_one_mail_with_a_text_and_an_html_part(ses: Ses) -> None:
    delivery = ses.channel().notify(approval(), KEY)

    [request] = ses.requests
    subject, text, html = parts(request)
    assert subject == "Approve issue_refund?"
    assert "issue_refund" in text and '"orderId": "A-17"' in text
    assert "Arguments of <code>issue_refund</code>" in html
    assert request["FromEmailAddress"] == SENDER
    assert request["Destination"] == {"ToAddresses": ["ops@example.com"]}
    [sent] = ses.sent
    assert sent.subject == subject and sent.body == html
    assert delivery.receipt == {"messageId": sent.id}


def test_the_idempotency_key_is_an_ses_header(ses: Ses) -> None:
    ses.channel().notify(approval(), KEY)

    [request] = ses.requests
    headers = request["Content"]["Simple"]["Headers"]
    assert headers == [{"Name": IDEMPOTENCY_HEADER, "Value": SEED_KEY}]
    assert "EmailTags" not in request


def test_delivery_is_at_least_once_with_the_same_header_each_time(ses: Ses) -> None:
    channel = ses.channel()
    ses.failures = [(503, "ServiceUnavailable")]
    with pytest.raises(SendFailed):
        channel.notify(approval(), KEY)
    channel.notify(approval(), KEY)
    # a crash after SES accepted it and before the outbox recorded it: no receipt,
    # so the retry mails again (SES does not deduplicate) — with the same key
    channel.notify(approval(), KEY)

    values = [r["Content"]["Simple"]["Headers"] for r in ses.requests]
    assert values == [[{"Name": IDEMPOTENCY_HEADER, "Value": SEED_KEY}]] * 3
    assert len(ses.sent) == 2


def test_a_stuck_reminder_has_its_own_key(ses: Ses) -> None:
    stuck = approval().model_copy(update={"kind": "stuck"})
    ses.channel().notify(stuck, "run-1:stuck:p1:2:mail")

    [request] = ses.requests
    assert request["Content"]["Simple"]["Headers"][0]["Value"] == "run-1:p1:stuck:2"


def test_the_only_link_is_the_confirmation_page(ses: Ses) -> None:
    ses.channel().notify(approval(), KEY)

    [request] = ses.requests
    _, text, html = parts(request)
    assert URL.findall(text) == [LINK]
    assert re.findall(r'href="([^"]*)"', html) == [LINK]
    assert URL.findall(html) == [LINK]


def test_no_one_click_url_or_token_even_when_the_body_quotes_them(ses: Ses) -> None:
    quoting = approval(
        title=f"Approve? {APPROVE}",
        body=f"Approve: {APPROVE}\nDeny: {DENY}\nToken: token-1-but-longer",
        args={"callback": DENY},
    )

    ses.channel().notify(quoting, KEY)

    subject, text, html = parts(ses.requests[0])
    for part in (subject, text, html):
        assert APPROVE not in part
        assert DENY not in part
        assert "approve?token" not in part and "deny?token" not in part
    assert "[link removed]" in text


def test_a_question_shows_its_options_and_no_answer_url(ses: Ses) -> None:
    ses.channel().notify(question(), "run-1:p2:mail")

    _, text, html = parts(ses.requests[0])
    assert "Refund to card or store credit?" in text
    assert "- card" in text and "- store credit <b>" in text
    assert "store credit &lt;b&gt;" in html
    assert ANSWER not in text and ANSWER not in html
    assert re.findall(r'href="([^"]*)"', html) == ["https://signoff.example.com/a/token-2"]


def test_values_are_escaped_in_the_html_part() -> None:
    hostile = approval(
        title="<img src=x onerror=alert(1)>",
        body="<script>alert('body')</script> & more",
        tool="refund<b>",
        args={"note": "</pre><script>alert('args')</script>"},
    )

    text, html = render(hostile)

    assert "<script>" not in html and "<img" not in html and "refund<b>" not in html
    assert "&lt;script&gt;alert(&#x27;body&#x27;)&lt;/script&gt; &amp; more" in html
    assert "&lt;/pre&gt;&lt;script&gt;" in html
    assert "<script>alert('body')</script> & more" in text  # the text part is plain text


def test_a_link_that_is_not_http_is_left_out() -> None:
    text, html = render(approval(link_url="javascript:alert(1)"))

    assert "javascript:" not in html and "javascript:" not in text
    assert "href" not in html


def test_a_subject_stays_on_one_line(ses: Ses) -> None:
    ses.channel().notify(approval(title="Approve\r\nBcc: someone@evil.example"), KEY)

    subject, _, _ = parts(ses.requests[0])
    assert subject == "Approve Bcc: someone@evil.example"


def test_a_previous_receipt_means_it_was_sent_already(ses: Ses) -> None:
    channel = ses.channel()
    first = channel.notify(approval(), KEY)

    again = channel.notify(approval(), KEY, previous=first)

    assert again == first
    assert len(ses.sent) == 1


def test_an_unverified_sender_is_a_permanent_failure(ses: Ses) -> None:
    # moto answers MessageRejected, as SES does for an identity it has not verified
    with pytest.raises(SendFailed) as failed:
        ses.channel(sender="stranger@unverified.example").notify(approval(), KEY)

    assert failed.value.retryable is False
    assert "MessageRejected" in failed.value.reason
    assert ses.sent == []


@pytest.mark.parametrize(
    ("status", "code", "retryable"),
    [
        (429, "TooManyRequestsException", True),
        (400, "Throttling", True),
        (500, "InternalFailure", True),
        (503, "ServiceUnavailable", True),
        (400, "MessageRejected", False),
        (400, "MailFromDomainNotVerifiedException", False),
        (400, "BadRequestException", False),
        (400, "SendingPausedException", False),
        (404, "NotFoundException", False),
    ],
)
def test_ses_errors_are_classified(ses: Ses, status: int, code: str, retryable: bool) -> None:
    ses.failures.append((status, code))

    with pytest.raises(SendFailed) as failed:
        ses.channel().notify(approval(), KEY)

    assert failed.value.retryable is retryable
    assert failed.value.status == status
    assert code in failed.value.reason
    assert failed.value.channel == "mail"


def test_an_unreachable_endpoint_is_retryable(ses: Ses) -> None:
    ses.failures.append(
        EndpointConnectionError(endpoint_url="https://email.us-east-1.amazonaws.com")
    )

    with pytest.raises(SendFailed) as failed:
        ses.channel().notify(approval(), KEY)

    assert failed.value.retryable is True


def test_without_ses_headers_the_key_goes_into_a_tag(ses: Ses) -> None:
    channel = ses.channel()
    channel._use_header = False  # what an older botocore's model leads to

    channel.notify(approval(), KEY)

    [request] = ses.requests
    assert "Headers" not in request["Content"]["Simple"]
    assert request["EmailTags"] == [{"Name": IDEMPOTENCY_TAG, "Value": "run-1_p1"}]


def test_tag_values_keep_to_ses_characters() -> None:
    assert tag_value("run-1:p1:mail") == "run-1_p1_mail"
    assert tag_value("ä b/c") == "__b_c"
    assert len(tag_value("x" * 400)) == 255
    assert re.fullmatch(r"[A-Za-z0-9_-]+", tag_value("01J:ÿ:ch"))


def test_approvers_are_compared_without_case(ses: Ses) -> None:
    channel = ses.channel()

    assert channel.allows("ops@EXAMPLE.com")
    assert not channel.allows("someone@example.com")
    assert EmailChannel("m", ["a@b.co"], SENDER, client=ses.client).allows("anyone@x.co")


def test_from_config_sends_through_a_client_built_on_first_use(ses: Ses) -> None:
    settings = EmailSettings.model_validate(
        {"type": "email", "to": ["ops@example.com"], "from": SENDER, "approvers": []}
    )

    channel = EmailChannel.from_config(
        settings, BuildContext(secrets=MemorySecrets()), name="support-email"
    )
    delivery = channel.notify(approval(), KEY)

    assert channel.name == "support-email"
    assert isinstance(delivery, Delivery)
    assert len(ses.sent) == 1


def test_each_recipient_gets_their_own_message_and_key_and_a_retry_mails_only_the_rest(
    ses: Ses,
) -> None:
    channel = EmailChannel("mail", ["a@example.com", "b@example.com"], SENDER, client=ses.client)
    letters = {
        "a@example.com": approval(link_url="https://signoff.example.com/a/token-a"),
        "b@example.com": approval(link_url="https://signoff.example.com/a/token-b"),
    }
    ses.failures = [(503, "ServiceUnavailable")]  # a's send fails once, b's goes out

    with pytest.raises(SendFailed) as failed:
        channel.notify_each(letters, KEY)
    assert failed.value.retryable is True
    # what went out travels with the failure; the outbox hands it to the retry
    assert failed.value.receipt is not None and set(failed.value.receipt) == {
        "messageId:b@example.com"
    }
    sent = channel.notify_each(letters, KEY, previous=Delivery(receipt=failed.value.receipt))

    assert [m.destinations["ToAddresses"] for m in ses.sent] == [
        ["b@example.com"],
        ["a@example.com"],
    ]
    keys = [r["Content"]["Simple"]["Headers"][0]["Value"] for r in ses.requests]
    assert keys == [
        f"{SEED_KEY}:a@example.com",
        f"{SEED_KEY}:b@example.com",
        f"{SEED_KEY}:a@example.com",
    ]
    assert "token-a" in ses.sent[1].body and "token-b" not in ses.sent[1].body
    assert set(sent.receipt) == {"messageId:a@example.com", "messageId:b@example.com"}
    # the row's recorded receipt: nothing is mailed again
    assert channel.notify_each(letters, KEY, previous=sent) == sent
    assert len(ses.sent) == 2
