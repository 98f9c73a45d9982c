"""The Lark (Feishu) channel: an interactive card sent by the app's bot to one chat.

The app authenticates with a ``tenant_access_token`` bought from its app id and
secret; the token lives about two hours and is cached until shortly before it
expires, and fetched again once when Lark calls it invalid. Messages carry
Lark's own dedupe field ``uuid`` (at most one message per uuid within an hour).
Lark answers ``{"code": 0, ...}`` on success and a non-zero ``code`` otherwise,
sometimes under HTTP 200. Clicks are read by ``channels.lark_callbacks``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from typing import TYPE_CHECKING, Any, Final, Self
from urllib.parse import quote

from signoff.approver.display import visible
from signoff.channels._chat import in_transit, message_ref, numbered, require_buttons
from signoff.channels.base import Delivery, already_sent
from signoff.errors import SendFailed
from signoff.http_errors import RETRYABLE, map_httpx_errors, retry_after

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import httpx

    from signoff.channels.build import BuildContext
    from signoff.channels.notification import Notification
    from signoff.channels.settings.lark import LarkSettings
    from signoff.clock import Clock

__all__ = ["LARK_API", "LarkChannel", "lark_uuid", "render_card"]

# Lark's international host; Feishu (mainland China) deployments set baseUrl to
# https://open.feishu.cn — the paths and payloads are the same.
LARK_API: Final = "https://open.larksuite.com"
_TOKEN_PATH: Final = "/open-apis/auth/v3/tenant_access_token/internal"  # noqa: S105 - a path
_MESSAGES_PATH: Final = "/open-apis/im/v1/messages"
_JSON: Final = "application/json; charset=utf-8"  # the fixed value Lark's docs require

# tenant_access_token invalid / malformed: the cached token was revoked or rotated early.
_INVALID_TOKEN: Final = frozenset({99991663, 99991671})
# Rate limits: the gateway's (99991400, HTTP 429 or 400 on older APIs) and IM's own.
_RATE_LIMITED: Final = frozenset({99991400, 230020})
# Refresh this long before Lark's stated expiry, so a send never carries a token
# that dies in flight; capped at half the lifetime for very short-lived tokens.
_REFRESH_MARGIN: Final = 300.0

_TEMPLATES: Final = {
    "approval": "orange",
    "question": "blue",
    "stuck": "red",
    "result": "green",
    "info": "grey",
}


class LarkChannel:
    """Sends notifications as interactive cards to one Lark chat and updates them after."""

    def __init__(
        self,
        name: str,
        chat_id: str,
        app_id: str,
        app_secret: str,
        *,
        client: httpx.Client,
        clock: Clock,
        base_url: str = LARK_API,
        approvers: Sequence[str] = (),
    ) -> None:
        self.name = name
        # Who may decide by clicking (empty: anyone in the chat). The notifier sends
        # such a channel no link that decides without naming who decides.
        self.approvers = tuple(approvers)
        self.chat_id = chat_id
        self._app_id = app_id
        self._app_secret = app_secret
        self._client = client
        self._clock = clock
        self._base_url = base_url.rstrip("/")
        self._token: str | None = None
        self._token_deadline = 0.0  # on the clock's monotonic scale
        # Sends of one batch run in threads sharing this channel: one token fetch at a time.
        self._token_lock = threading.Lock()

    @classmethod
    def from_config(
        cls,
        settings: LarkSettings,
        context: BuildContext,
        *,
        name: str = "lark",
    ) -> Self:
        """Build the channel, reading the app secret from ``secrets``.

        Raises:
            SecretMissing: the app secret is not set.
            StoreUnavailable: the secret source failed transiently.
        """
        return cls(
            name,
            settings.chat_id,
            settings.app_id,
            context.secrets.get(settings.app_secret.secret),
            client=context.http(),
            clock=context.clock,
            base_url=settings.base_url,
            approvers=settings.approvers,
        )

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Send the card, unless ``previous`` shows it was sent already.

        Raises:
            SendFailed: Lark refused the message or could not be reached.
        """
        # Lark dedupes a uuid for one hour only; a recorded message id dedupes for good.
        if already_sent(previous, "message_id"):
            return previous
        require_buttons(self.name, notification)
        body = {
            "receive_id": self.chat_id,
            "msg_type": "interactive",
            # Lark takes the card as a JSON string inside the JSON body.
            "content": json.dumps(render_card(notification), ensure_ascii=False),
            "uuid": lark_uuid(idempotency_key),
        }
        answer = self._authorized(
            "POST", _MESSAGES_PATH, body, params={"receive_id_type": "chat_id"}
        )
        data = answer.get("data")
        message_id = data.get("message_id") if isinstance(data, dict) else None
        if not isinstance(message_id, str) or not message_id:
            # code 0 means the message exists; sending again could show it twice.
            raise SendFailed(
                self.name, "the send answered code 0 without a message_id", retryable=False
            )
        return Delivery(receipt={"message_id": message_id})

    def refresh(self, receipt: Mapping[str, str], notification: Notification) -> None:
        """Redraw the sent card as ``notification``'s, buttons kept (a shared card).

        Raises:
            SendFailed: the receipt names no message, or Lark refused the update.
        """
        message_id = message_ref(self.name, dict(receipt), "message_id", "message_id")
        body = {"content": json.dumps(render_card(notification), ensure_ascii=False)}
        self._authorized("PATCH", f"{_MESSAGES_PATH}/{quote(message_id, safe='')}", body)

    def update_outcome(self, receipt: dict[str, str], text: str) -> None:
        """Replace the sent card with one showing ``text`` (the outcome and who decided).

        Raises:
            SendFailed: the receipt names no message, or Lark refused the update.
        """
        message_id = message_ref(self.name, receipt, "message_id", "message_id")
        card = {
            # The update must declare update_multi too, or only the clicker would see it.
            "config": {"wide_screen_mode": True, "update_multi": True},
            "elements": [_plain_div(text)],
        }
        body = {"content": json.dumps(card, ensure_ascii=False)}
        self._authorized("PATCH", f"{_MESSAGES_PATH}/{quote(message_id, safe='')}", body)

    def _authorized(
        self, method: str, path: str, body: dict[str, Any], params: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Call an API with the tenant token; the answer when its ``code`` is 0."""
        response = self._request(method, path, body, params=params, token=self._tenant_token())
        answer, code = _decode(response)
        if code in _INVALID_TOKEN:
            # Revoked or rotated before its stated expiry: one fresh token, one more
            # try. The request was refused, and a send carries the same uuid anyway.
            token = self._tenant_token(refresh=True)
            response = self._request(method, path, body, params=params, token=token)
            answer, code = _decode(response)
        if code == 0 and answer is not None:
            return answer
        raise self._failure(path, response, answer, code)

    def _tenant_token(self, *, refresh: bool = False) -> str:
        with self._token_lock:
            now = self._clock.monotonic()
            if self._token is not None and not refresh and now < self._token_deadline:
                return self._token
            body = {"app_id": self._app_id, "app_secret": self._app_secret}
            response = self._request("POST", _TOKEN_PATH, body)
            answer, code = _decode(response)
            token = answer.get("tenant_access_token") if answer is not None else None
            expire = answer.get("expire") if answer is not None else None
            if code != 0 or not isinstance(token, str) or not token:
                raise self._failure(_TOKEN_PATH, response, answer, code)
            lifetime = float(expire) if isinstance(expire, int | float) else 0.0
            self._token = token
            self._token_deadline = now + max(lifetime - _REFRESH_MARGIN, lifetime / 2)
            return token

    def _request(
        self,
        method: str,
        path: str,
        body: dict[str, Any],
        *,
        params: dict[str, str] | None = None,
        token: str | None = None,
    ) -> httpx.Response:
        headers = {"Content-Type": _JSON}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        with map_httpx_errors(in_transit(self.name, path)):
            return self._client.request(
                method,
                f"{self._base_url}{path}",
                params=params,
                content=json.dumps(body, ensure_ascii=False).encode(),
                headers=headers,
                follow_redirects=False,
            )

    def _failure(
        self,
        path: str,
        response: httpx.Response,
        answer: dict[str, Any] | None,
        code: int | None,
    ) -> SendFailed:
        status = response.status_code
        message = answer.get("msg") if answer is not None else None
        what = f"code {code}" if code is not None else f"HTTP {status}"
        reason = f"{path}: {what}" + (f" {message}" if isinstance(message, str) and message else "")
        limited = status == 429 or code in _RATE_LIMITED
        retryable = limited or status in RETRYABLE or (status == 200 and code is None)
        return SendFailed(
            self.name,
            reason,
            retryable=retryable,
            status=status,
            retry_after=retry_after(response.headers, header="x-ogw-ratelimit-reset")
            if limited
            else None,
        )


def lark_uuid(idempotency_key: str) -> str:
    """Lark's ``uuid`` for a send: a digest of the key, since Lark caps it at 50 characters.

    Our keys (``runId:pendingId:channel``) run past 50; 128 bits of SHA-256 in
    UUID form fit, stay stable across retries and do not collide in practice.
    """
    return str(uuid.UUID(bytes=hashlib.sha256(idempotency_key.encode()).digest()[:16]))


def render_card(notification: Notification) -> dict[str, Any]:
    """The interactive card: title, body, fields, and the buttons for its kind.

    Text from the agent goes in ``plain_text`` elements so it cannot mention
    ``@all`` or smuggle links through Lark's markdown.
    """
    elements: list[dict[str, Any]] = []
    if notification.kind == "question":
        elements.append(_plain_div(notification.question or notification.body))
        if notification.options:
            elements.append(_plain_div(numbered(notification.options)))
    else:
        # a composed approval's card rows; its arguments follow once, below
        body = notification.card_rows() or notification.body
        if body:
            elements.append(_plain_div(body))
        if notification.kind == "approval" and notification.tool:
            arguments = json.dumps(
                notification.args or {}, indent=2, sort_keys=True, ensure_ascii=False, default=str
            )
            elements.append(_plain_div(f"Tool: {notification.tool}\n{arguments}"))
    if notification.note:
        elements.append(_plain_div(notification.note))
    elements.append({"tag": "div", "fields": _fields(notification)})
    actions = _actions(notification)
    if actions:
        elements.append({"tag": "action", "actions": actions})
    return {
        # update_multi: a shared card, so the outcome update reaches everyone in the chat.
        "config": {"wide_screen_mode": True, "update_multi": True},
        "header": {
            "title": _plain(notification.title or notification.kind),
            "template": _TEMPLATES[notification.kind],
        },
        "elements": elements,
    }


def _fields(notification: Notification) -> list[dict[str, Any]]:
    pairs = [("Agent", notification.agent)]
    if notification.tenant:
        pairs.append(("Tenant", notification.tenant))
    card = notification.card() if notification.summary and notification.requested_at else None
    if card is not None and card.expires_at:
        # as the card words it when asked: "in 1 day (2026-12-02 18:00 UTC)", not RFC 3339
        pairs.append(("Expires", card.expires(card.requested_at)))
    elif notification.expires_at:
        pairs.append(("Expires", notification.expires_at))
    return [{"is_short": True, "text": _plain(f"{label}: {value}")} for label, value in pairs]


def _actions(notification: Notification) -> list[dict[str, Any]]:
    pending_id = notification.pending_id
    if pending_id is None:
        return []
    if notification.kind == "approval":
        return [
            _button("Approve", "primary", {"pendingId": pending_id, "decision": "approve"}),
            _button("Deny", "danger", {"pendingId": pending_id, "decision": "deny"}),
        ]
    if notification.kind != "question":
        return []
    buttons = [
        _button(option, "default", {"pendingId": pending_id, "answer": option})
        for option in notification.options or []
    ]
    # A url button opens the page and sends no callback: free text is typed there,
    # unless the notification has no answerUrl (a channel with approvers) and the
    # page only shows the question.
    link = notification.answer_url or notification.link_url
    label = "Answer in browser" if notification.answer_url else "View in browser"
    if link:
        buttons.append(
            {
                "tag": "button",
                "text": _plain(label),
                "type": "default",
                "url": link,
            }
        )
    return buttons


def _button(label: str, kind: str, value: dict[str, str]) -> dict[str, Any]:
    return {
        "tag": "button",
        "text": _plain(label),
        "type": kind,
        "value": value,
    }


def _plain_div(text: str) -> dict[str, Any]:
    return {"tag": "div", "text": _plain(text)}


def _plain(text: str) -> dict[str, str]:
    """Plain text for the card, hidden characters (bidi overrides, zero-width) shown escaped."""
    return {"tag": "plain_text", "content": visible(text)}


def _decode(response: httpx.Response) -> tuple[dict[str, Any] | None, int | None]:
    """The JSON answer and its ``code``, or ``None`` for what is not a Lark answer."""
    try:
        answer = response.json()
    except ValueError:
        return None, None
    if not isinstance(answer, dict):
        return None, None
    code = answer.get("code")
    # bool is an int in Python; a true/false "code" is not Lark's.
    if isinstance(code, int) and not isinstance(code, bool):
        return answer, code
    return answer, None
