"""``POST /slack/interactions`` and ``POST /lark/callback``: decisions clicked in a chat.

A request is trusted only after its signature (Slack) or token / signature
(Lark) verified against one of the deployment's channels of that type;
anything that fails to verify — including a malformed request — is a 401. The
channel a click decides through is the verified one that posts to the click's
own chat, and only if the item was sent there (``signoff.api.clicks``).
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from signoff.api.body import JSON, form_body
from signoff.api.clicks import Click, decide_click
from signoff.api.context import api_of
from signoff.api.docs import CHAT_RESPONSES
from signoff.errors import BadForm, InvalidSignature, NotFound

__all__ = ["router"]

router = Router()


def _json(status: int, body: dict[str, Any]) -> Response[str]:
    return Response(status_code=status, content_type="application/json", body=json.dumps(body))


def _unauthorized() -> Response[str]:
    return _json(401, {"error": "unauthorized", "detail": "the request could not be verified"})


@router.post(
    "/slack/interactions",
    summary="Slack button clicks",
    responses=CHAT_RESPONSES,
    tags=["chat"],
    openapi_extensions=form_body({"payload": {"type": "string"}}),
)
def slack_interactions() -> Response[str]:
    from signoff.channels.settings.slack import SlackSettings
    from signoff.channels.slack.interactions import parse_slack_action, verify_slack_request

    api = api_of(router)
    chat = api.chat
    now = api.clock.now().timestamp()  # the window a signed request's timestamp must fall in
    event = router.current_event
    body = event.decoded_body or ""
    action = None
    bound: list[tuple[str, SlackSettings]] = []
    # Every channel whose secret verifies is a candidate (one Slack app usually
    # serves several channels); the click's own channel id picks among them.
    for name, settings in chat.of_type(SlackSettings):
        secret = chat.secrets.get(settings.signing_secret.secret)
        try:
            verify_slack_request(event.headers, body, secret, now)
        except InvalidSignature:
            continue
        if action is None:
            try:
                action = parse_slack_action(body)
            except BadForm as exc:
                return _json(400, {"error": "bad_request", "detail": str(exc)})
        if action.channel_id == settings.channel_id:
            bound.append((name, settings))
    if action is None:
        return _unauthorized()
    if action.kind == "open" or not action.pending_id:
        return _json(200, {})  # a link button: Slack opens the page itself
    receipt = action.receipt
    outcome = decide_click(
        api,
        Click(
            vendor="slack",
            chat=action.channel_id,
            channels=bound,
            user=action.user_id,
            pending_id=action.pending_id,
            decision=action.decision,
            answer=action.answer,
            note=action.note,
        ),
        lambda name: chat.updater(name, receipt),
    )
    return _json(200, {"response_type": "ephemeral", "text": outcome.text})


@router.post(
    "/lark/callback",
    summary="Lark card clicks and URL verification",
    responses=CHAT_RESPONSES,
    tags=["chat"],
    openapi_extensions={
        "requestBody": {"required": True, "content": {JSON: {"schema": {"type": "object"}}}}
    },
)
def lark_callback_route() -> Response[str]:
    from signoff.channels.lark.callbacks import LarkAction, LarkChallenge, lark_callback
    from signoff.channels.settings.lark import LarkSettings

    api = api_of(router)
    chat = api.chat
    now = api.clock.now().timestamp()  # the window a signed request's timestamp must fall in
    event = router.current_event
    body = event.decoded_body or ""
    action: LarkAction | None = None
    bound: list[tuple[str, LarkSettings]] = []
    # As for Slack: every channel whose token (and key) verifies is a candidate,
    # and the card's own chat (open_chat_id) picks among them.
    for name, settings in chat.of_type(LarkSettings):
        token = chat.secrets.get(settings.verification_token.secret)
        key = chat.secrets.get(settings.encrypt_key.secret) if settings.encrypt_key else None
        try:
            parsed = lark_callback(body, event.headers, token, key, now=now)
        except InvalidSignature:
            continue
        except BadForm as exc:
            return _json(400, {"error": "bad_request", "detail": str(exc)})
        if isinstance(parsed, LarkChallenge):
            return _json(200, parsed.response())
        action = parsed
        if parsed.chat_id == settings.chat_id:
            bound.append((name, settings))
    if action is None:
        return _unauthorized()
    if not action.pending_id:
        raise NotFound("pending item", "")
    receipt = action.receipt
    outcome = decide_click(
        api,
        Click(
            vendor="lark",
            chat=action.chat_id,
            channels=bound,
            user=action.open_id,
            pending_id=action.pending_id,
            decision=action.decision,
            answer=action.answer,
        ),
        lambda name: chat.updater(name, receipt),
    )
    return _json(
        200, {"toast": {"type": "success" if outcome.decided else "info", "content": outcome.text}}
    )
