"""The email channel: SES v2 ``SendEmail`` messages with a text and an HTML part.

Every recipient of an approval or a question gets a message of their own, whose
link was signed for their address (``notify_each``): a decision through it is
that person's, recorded by address, and the channel's ``approvers`` are checked
against it when the link is used. Announcements without a decision in them go to
all recipients in one message (``notify``).

Mail scanners open every link in a message before a person does, so the only
link in an email is the notification's ``linkUrl``: the confirmation page,
whose GET changes nothing. The one-click ``approveUrl`` / ``denyUrl`` /
``answerUrl`` and the resume token never go into a mail; a body that quotes one
has it replaced.

The seed's key of the notification (``notification_key``: ``<runId>:<approvalId>``
for an approval; per-recipient messages add ``:<address>``) travels in an
``X-Signoff-Idempotency-Key`` header (SES v2 ``Content.Simple.Headers``, in
botocore since 1.34), the same on every retry, so a receiving system or a person
reading the headers can spot a duplicate. A botocore too old to know
``Headers`` gets it as the ``signoff-idempotency-key`` email tag instead (tags
allow only letters, digits, ``_`` and ``-``, so other characters become ``_``).

Delivery is at least once. SES has no idempotency key of its own and does not
deduplicate: a retry whose earlier attempt left a receipt (``previous``, its
``messageId``) sends nothing, but a process that stops after SES accepted a
message and before the outbox recorded it leaves no receipt, and the retry
mails the same notification again, with the same header.
"""

from __future__ import annotations

import html
import json
import re
from typing import TYPE_CHECKING, Final, Self
from urllib.parse import quote, urlsplit

from signoff.channels.base import Delivery
from signoff.channels.notification import notification_key
from signoff.display import visible
from signoff.errors import SendFailed

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from botocore.exceptions import ClientError
    from mypy_boto3_sesv2.client import SESV2Client
    from mypy_boto3_sesv2.type_defs import SendEmailRequestTypeDef

    from signoff.channels.build import BuildContext
    from signoff.channels.config import EmailSettings
    from signoff.channels.notification import Notification

__all__ = ["IDEMPOTENCY_HEADER", "IDEMPOTENCY_TAG", "EmailChannel", "render", "tag_value"]

IDEMPOTENCY_HEADER: Final = "X-Signoff-Idempotency-Key"
IDEMPOTENCY_TAG: Final = "signoff-idempotency-key"
_UTF8: Final = "UTF-8"
_REMOVED: Final = "[link removed]"
_TAG_VALUE: Final = re.compile(r"[^A-Za-z0-9_-]")
_SUBJECT_MAX: Final = 200

# SES error codes that a later attempt may get past; every other code is permanent
# (MessageRejected, MailFromDomainNotVerifiedException, BadRequestException, …).
_RETRYABLE_CODES: Final = frozenset(
    {
        "TooManyRequestsException",
        "Throttling",
        "ThrottlingException",
        "RequestTimeout",
        "RequestTimeoutException",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "InternalFailure",
        "InternalServerError",
    }
)

_ACTIONS: Final = {"approval": "Review and decide", "question": "Answer the question"}


class EmailChannel:
    """Mails each notification to fixed recipients through SES v2."""

    def __init__(
        self,
        name: str,
        to: list[str],
        sender: str,
        *,
        client: SESV2Client,
        approvers: list[str] | None = None,
    ) -> None:
        self.name = name
        self.to = list(to)
        self.sender = sender
        # Who may decide from a link in this mailbox (empty: anyone who has the link).
        self.approvers = list(approvers or [])
        self._client = client
        self._use_header: bool | None = None  # learnt from the client's service model

    @classmethod
    def from_config(
        cls,
        settings: EmailSettings,
        context: BuildContext,
        *,
        name: str = "email",
    ) -> Self:
        """The channel ``channels.yaml`` describes; the SES client is built on first send."""
        from signoff.awsclients import lazy_client  # boto3 only when a mail is sent

        return cls(
            name,
            settings.to,
            settings.sender,
            client=lazy_client("sesv2"),
            approvers=settings.approvers,
        )

    def allows(self, address: str) -> bool:
        """Whether ``address`` may decide (no approvers listed: anyone may)."""
        wanted = address.strip().lower()
        return not self.approvers or any(a.lower() == wanted for a in self.approvers)

    @property
    def recipients(self) -> list[str]:
        """The addresses that each get their own message (and their own links)."""
        return list(self.to)

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Send ``notification`` to every recipient at once, unless ``previous`` shows SES
        accepted it already. For notifications without a decision in them (lifecycle
        announcements); approvals and questions go through ``notify_each``.

        Raises:
            SendFailed: throttling, a timeout or a 5xx (retryable); a rejected message,
                an unverified sender or a bad request (permanent).
        """
        if previous is not None and previous.receipt.get("messageId"):
            return previous
        key = notification_key(idempotency_key, run_id=notification.run_id, channel=self.name)
        return Delivery(receipt={"messageId": self._send(notification, self.to, key)})

    def notify_each(
        self,
        letters: Mapping[str, Notification],
        idempotency_key: str,
        previous: Delivery | None = None,
    ) -> Delivery:
        """Mail each address its own notification (its links name that address).

        Each message carries its own idempotency key (``<key>:<address>``, ``<key>``
        the seed's key of the notification). The
        receipt holds every message id (``messageId:<address>``); recipients named
        in ``previous`` are not mailed again. A failure for one address does not
        stop the others; the first failure is raised afterwards (retryable if any
        was) carrying the receipt of those that went out, which the outbox keeps
        for the retry — the row is recorded sent only once every address was.

        Raises:
            SendFailed: a recipient's message was refused or SES could not be reached.
        """
        done = dict(previous.receipt) if previous is not None else {}
        if done.get("messageId"):
            return Delivery(receipt=done)  # sent as one message before recipients had links
        failures: list[SendFailed] = []
        for address, notification in letters.items():
            if done.get(f"messageId:{address}"):
                continue
            try:
                key = notification_key(
                    idempotency_key, run_id=notification.run_id, channel=self.name
                )
                sent = self._send(notification, [address], f"{key}:{address}")
            except SendFailed as failure:
                failures.append(failure)
                continue
            done[f"messageId:{address}"] = sent
        if failures:
            retryable = any(failure.retryable for failure in failures)
            first = next((f for f in failures if f.retryable == retryable), failures[0])
            raise SendFailed(
                self.name, first.reason, retryable=retryable, status=first.status, receipt=done
            )
        return Delivery(receipt=done)

    def _send(self, notification: Notification, to: list[str], idempotency_key: str) -> str:
        """One SES message of ``notification`` to ``to``; its message id."""
        from botocore.exceptions import BotoCoreError, ClientError

        text, html_part = render(notification)
        subject = _subject(_scrubber(notification)(notification.title))
        request: SendEmailRequestTypeDef = {
            "FromEmailAddress": self.sender,
            "Destination": {"ToAddresses": to},
            "Content": {
                "Simple": {
                    "Subject": {"Data": subject, "Charset": _UTF8},
                    "Body": {
                        "Text": {"Data": text, "Charset": _UTF8},
                        "Html": {"Data": html_part, "Charset": _UTF8},
                    },
                }
            },
        }
        try:
            if self._headers_supported():
                request["Content"]["Simple"]["Headers"] = [
                    {"Name": IDEMPOTENCY_HEADER, "Value": _header_value(idempotency_key)}
                ]
            else:
                request["EmailTags"] = [
                    {"Name": IDEMPOTENCY_TAG, "Value": tag_value(idempotency_key)}
                ]
            response = self._client.send_email(**request)
        except ClientError as exc:
            raise self._translate(exc) from exc
        except BotoCoreError as exc:
            raise SendFailed(
                self.name,
                f"SES could not be reached ({type(exc).__name__})",
                retryable=_transport_error(exc),
            ) from exc
        return response["MessageId"]

    def _headers_supported(self) -> bool:
        """Whether the installed botocore's SES v2 model has ``Content.Simple.Headers``."""
        if self._use_header is None:
            message = self._client.meta.service_model.shape_for("Message")
            self._use_header = "Headers" in getattr(message, "members", {})
        return self._use_header

    def _translate(self, exc: ClientError) -> SendFailed:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        retryable = code in _RETRYABLE_CODES or (
            isinstance(status, int) and (status >= 500 or status in (408, 429))
        )
        message = str(error.get("Message", "")).strip()
        reason = f"SES refused the message: {code or 'error'}" + (
            f" ({message})" if message else ""
        )
        return SendFailed(
            self.name,
            reason,
            retryable=retryable,
            status=status if isinstance(status, int) else None,
        )


def render(notification: Notification) -> tuple[str, str]:
    """The text and the HTML part of ``notification``'s mail; its only link is ``linkUrl``."""
    scrub = _scrubber(notification)
    body = scrub(notification.body)
    link = _safe_link(notification.link_url)
    action = _ACTIONS.get(notification.kind, "Open in signoff")
    details: list[tuple[str, str, bool]] = []  # (label, value, preformatted)
    if notification.tool:
        details.append(("Tool", scrub(notification.tool), False))
    if notification.args is not None:
        arguments = json.dumps(notification.args, indent=2, ensure_ascii=False, sort_keys=True)
        details.append(("Arguments", scrub(arguments), True))
    if notification.question:
        details.append(("Question", scrub(notification.question), False))
    if notification.options:
        details.append(("Options", "\n".join(f"- {scrub(o)}" for o in notification.options), True))
    if notification.expires_at:
        details.append(("Expires", notification.expires_at, False))
    footer = f"signoff · agent {notification.agent} · run {notification.run_id}"

    title = scrub(" ".join(notification.title.split()))
    text_lines = [title, "", body, ""]
    for label, value, preformatted in details:
        text_lines += [f"{label}:", value, ""] if preformatted else [f"{label}: {value}"]
    if link:
        text_lines += [f"{action}: {link}", ""]
    text_lines += ["-- ", footer]
    text = "\n".join(text_lines).strip() + "\n"

    e = html.escape
    parts = [f"<h2>{e(title)}</h2>", f"<p>{e(body).replace(chr(10), '<br>')}</p>"]
    if details:
        parts.append("<dl>")
        for label, value, preformatted in details:
            shown = f"<pre>{e(value)}</pre>" if preformatted else e(value)
            parts.append(f"<dt>{e(label)}</dt><dd>{shown}</dd>")
        parts.append("</dl>")
    if link:
        parts.append(f'<p><a href="{e(link, quote=True)}">{e(action)}</a></p>')
    parts.append(f'<p style="color:#666;font-size:small">{e(footer)}</p>')
    html_part = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        + "".join(parts)
        + "</body></html>"
    )
    return text, html_part


def tag_value(key: str) -> str:
    """``key`` as an SES email tag value: letters, digits, ``_`` and ``-``, under 256 characters."""
    return _TAG_VALUE.sub("_", key)[:255] or "_"


def _subject(title: str) -> str:
    # One line: a newline in a subject is a header injection attempt or a mistake.
    line = " ".join(title.split())
    return line[: _SUBJECT_MAX - 1] + "…" if len(line) > _SUBJECT_MAX else line


def _header_value(key: str) -> str:
    # SES takes printable ASCII only; anything else is percent-encoded, deterministically.
    printable = "".join(chr(c) for c in range(0x20, 0x7F))
    return quote(key, safe=printable)[:995]


def _safe_link(url: str | None) -> str | None:
    """``url`` when it is an absolute http(s) link (never ``javascript:`` in an href)."""
    if not url:
        return None
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.netloc else None


def _scrubber(notification: Notification) -> Callable[[str], str]:
    """Replaces the one-click links and the resume token wherever a text quotes them.

    It also shows hidden characters (bidi overrides, zero-width, controls) escaped
    (``signoff.display``): every text it is given is one the recipient reads.
    """
    forbidden = [
        value
        for value in (
            notification.approve_url,
            notification.deny_url,
            notification.answer_url,
            notification.resume_token,
        )
        if value
    ]
    # Longest first, so a URL is removed whole before a token inside it is.
    forbidden.sort(key=len, reverse=True)

    def scrub(value: str) -> str:
        for secret in forbidden:
            value = value.replace(secret, _REMOVED)
        return visible(value)

    return scrub


def _transport_error(exc: Exception) -> bool:
    """Whether a botocore error is a network failure (retryable), not a local mistake."""
    from botocore.exceptions import ConnectionError as BotoConnectionError
    from botocore.exceptions import HTTPClientError

    return isinstance(exc, BotoConnectionError | HTTPClientError)
