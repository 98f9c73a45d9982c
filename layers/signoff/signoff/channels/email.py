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

The notification's channel-independent key (``notification_key``: ``<runId>:<approvalId>``
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
import re
from typing import TYPE_CHECKING, Final, Self
from urllib.parse import quote, urlsplit

from signoff.approver.display import visible
from signoff.channels.base import Delivery
from signoff.channels.notification import notification_key
from signoff.errors import SendFailed

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from botocore.exceptions import ClientError
    from mypy_boto3_sesv2.client import SESV2Client
    from mypy_boto3_sesv2.type_defs import SendEmailRequestTypeDef

    from signoff.channels.build import BuildContext
    from signoff.channels.notification import Notification
    from signoff.channels.settings.email import EmailSettings

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
        inbox_link: bool = False,
    ) -> None:
        self.name = name
        # Whether each approver's mail links their approvals inbox too (``inboxLink``).
        self.inbox_link = inbox_link
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
            inbox_link=settings.inbox_link,
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
        the notification's channel-independent key). The
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
    """The text and the HTML part of ``notification``'s mail; its only link is ``linkUrl``.

    An approval or a question is its decision card (``signoff.approver.card``): the summary,
    the request and the agent's words, why it asks, for whom, the expiry, then
    the arguments once; the HTML part is one styled card with one button.
    """
    scrub = _scrubber(notification)
    link = _safe_link(notification.link_url)
    action = _ACTIONS.get(notification.kind, "Open in signoff")
    footer = f"signoff · agent {notification.agent} · run {notification.run_id}"
    title = scrub(" ".join(notification.title.split()))
    lead, rows, arguments = _contents(notification, scrub)
    options = [scrub(o) for o in notification.options or []]
    inbox = _safe_link(notification.inbox_url)
    call = (scrub(notification.tool or ""), arguments)
    text = _text(title, lead, options, rows, call, link, action, footer, inbox=inbox)
    return text, _html(title, lead, options, rows, call, link, action, footer, inbox=inbox)


def _contents(
    notification: Notification, scrub: Callable[[str], str]
) -> tuple[str, list[tuple[str, str]], str | None]:
    """What the mail says, scrubbed: its lead, its labelled rows, an approval's arguments."""
    card = notification.card()
    if card is None:
        rows = [("Expires", notification.expires_at)] if notification.expires_at else []
        return scrub(notification.body), rows, None
    # the card's times are the ask's: a retry hours later says the same
    rows = [(label, scrub(value)) for label, value in card.facts(card.requested_at)]
    if card.kind != "approval":
        return scrub(card.question or "") if card.kind == "question" else "", rows, None
    # a caller's own notification (no summary) leads with its words
    lead = scrub(notification.body) if notification.summary is None else ""
    return lead, rows, scrub(card.arguments)


def _text(
    title: str,
    lead: str,
    options: list[str],
    rows: list[tuple[str, str]],
    call: tuple[str, str | None],
    link: str | None,
    action: str,
    footer: str,
    *,
    inbox: str | None = None,
) -> str:
    """The mail's plain-text part, the same parts as its HTML one."""
    tool, arguments = call
    lines = [title, ""]
    if lead:
        lines += [lead, ""]
    if options:
        lines += ["Suggested answers:", *(f"  - {o}" for o in options), ""]
    for label, value in rows:
        if "\n" in value or len(value) > 60:
            lines += [f"{label}:", *(f"  {line}" for line in value.splitlines()), ""]
        else:
            lines.append(f"{label}: {value}")
    if arguments is not None:
        lines += ["", f"Arguments ({tool}):", arguments]
    if link:
        lines += ["", f"{action}: {link}"]
    if inbox:
        lines += [f"Your approvals inbox: {inbox}"]
    lines += ["", "-- ", footer]
    return "\n".join(lines).strip() + "\n"


# Inline styles (mail clients drop <style>); the <style> block only adds dark mode
# where a client honours it. Every text colour is set with its background, so a
# client that inverts colours inverts both. Contrast ≥ 4.5:1 in both schemes.
_FONT: Final = "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
_DARK: Final = (
    "@media (prefers-color-scheme: dark){"
    ".bg{background:#111418 !important}.card{background:#1c2128 !important;"
    "border-color:#3d444d !important}.fg{color:#e6edf3 !important}"
    ".muted{color:#b1bac4 !important}.code{background:#0d1117 !important;"
    "color:#e6edf3 !important}}"
)


def _html(
    title: str,
    lead: str,
    options: list[str],
    rows: list[tuple[str, str]],
    call: tuple[str, str | None],
    link: str | None,
    action: str,
    footer: str,
    *,
    inbox: str | None = None,
) -> str:
    e = html.escape
    tool, arguments = call

    def para(text: str) -> str:
        return e(text).replace("\n", "<br>")

    parts = [
        f'<h1 class="fg" style="margin:0 0 16px;font-size:20px;line-height:1.35;color:#1a1a1a">'
        f"{e(title)}</h1>"
    ]
    if lead:
        parts.append(f'<p class="fg" style="margin:0 0 16px;color:#1a1a1a">{para(lead)}</p>')
    if options:
        items = "".join(f"<li>{e(o)}</li>" for o in options)
        parts.append(f'<ul class="fg" style="margin:0 0 16px;color:#1a1a1a">{items}</ul>')
    if link:
        parts.append(
            '<table role="presentation" cellpadding="0" cellspacing="0" style="margin:0 0 20px">'
            '<tr><td style="border-radius:6px;background:#1f4e99">'
            f'<a href="{e(link, quote=True)}" style="display:inline-block;padding:12px 22px;'
            f"{_FONT};font-size:16px;font-weight:600;color:#ffffff;text-decoration:none;"
            f'border-radius:6px">{e(action)}</a></td></tr></table>'
        )
    for label, value in rows:
        parts.append(
            f'<p class="muted" style="margin:0;font-size:13px;font-weight:600;color:#4a4a4a">'
            f'{e(label)}</p><p class="fg" style="margin:0 0 12px;color:#1a1a1a">{para(value)}</p>'
        )
    if arguments is not None:
        parts.append(
            '<p class="muted" style="margin:8px 0 4px;font-size:13px;font-weight:600;'
            f'color:#4a4a4a">Arguments of <code>{e(tool)}</code></p>'
            '<pre class="code" style="margin:0 0 12px;padding:12px;background:#f3f4f6;'
            "color:#1a1a1a;border-radius:6px;white-space:pre-wrap;word-break:break-word;"
            f'font-size:13px;font-family:ui-monospace,Menlo,Consolas,monospace">{e(arguments)}</pre>'
        )
    if inbox:
        # a text link after the card: the card keeps its one button
        parts.append(
            f'<p class="muted" style="margin:16px 0 0;font-size:13px;color:#4a4a4a">'
            f'<a href="{e(inbox, quote=True)}" style="color:#1f4e99">Your approvals inbox</a></p>'
        )
    parts.append(
        f'<p class="muted" style="margin:16px 0 0;font-size:12px;color:#4a4a4a">{e(footer)}</p>'
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        '<meta name="supported-color-schemes" content="light dark">'
        f"<title>{e(title)}</title><style>{_DARK}</style></head>"
        f'<body class="bg" style="margin:0;padding:0;background:#f4f5f7">'
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" class="bg" '
        'style="background:#f4f5f7"><tr><td align="center" style="padding:24px 12px">'
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" class="card" '
        'style="max-width:560px;background:#ffffff;border:1px solid #d0d7de;border-radius:8px">'
        f'<tr><td style="padding:24px;{_FONT};font-size:15px;line-height:1.5;color:#1a1a1a">'
        + "".join(parts)
        + "</td></tr></table></td></tr></table></body></html>"
    )


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
    (``signoff.approver.display``): every text it is given is one the recipient reads.
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
