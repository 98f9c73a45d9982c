"""The Lark channel against a real HTTP server on loopback that checks Lark's requests."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from signoff.channels.base import Delivery
from signoff.channels.build import BuildContext
from signoff.channels.lark.channel import LarkChannel, lark_uuid, render_card
from signoff.channels.notification import idempotency_key
from signoff.channels.settings.lark import LarkSettings
from signoff.clock import ManualClock
from signoff.errors import SendFailed
from signoff.secrets.memory import MemorySecrets
from tests.support.chat import APPROVAL, QUESTION, nothing_listening
from tests.support.chat import http as http
from tests.support.chat import server as server
from tests.support.http_server import Recorded, RecordingServer, Reply

if TYPE_CHECKING:
    import httpx

TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
MESSAGES_PATH = "/open-apis/im/v1/messages"
CHAT = "oc_a0553eda9014c201e6969b478895c230"
APP_ID = "cli_a1b2c3d4e5f6a7b8"
APP_SECRET = "app-secret-value"
KEY = idempotency_key("run_01JH5Z0000000000000000000", "pend_01JH5Z0000000000000000000", "lark")


def token_reply(token: str = "t-first", expire: int = 7200) -> Reply:
    return Reply(json={"code": 0, "msg": "ok", "tenant_access_token": token, "expire": expire})


def sent_reply(message_id: str = "om_dc13264520392913993dd051dba21dcf") -> Reply:
    return Reply(
        json={
            "code": 0,
            "msg": "success",
            "data": {
                "message_id": message_id,
                "msg_type": "interactive",
                "chat_id": CHAT,
            },
        }
    )


def requests_to(server: RecordingServer, path: str) -> list[Recorded]:
    return [request for request in server.requests if request.path == path]


def button(label: str, kind: str, value: dict[str, str]) -> dict[str, Any]:
    """A card button as Lark expects it."""
    return {
        "tag": "button",
        "text": {"tag": "plain_text", "content": label},
        "type": kind,
        "value": value,
    }


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def lark(server: RecordingServer, http: httpx.Client, clock: ManualClock) -> LarkChannel:
    return LarkChannel(
        "lark", CHAT, APP_ID, APP_SECRET, client=http, clock=clock, base_url=server.url
    )


def test_a_card_is_sent_with_a_fresh_token_and_lark_s_dedupe_uuid(
    server: RecordingServer, lark: LarkChannel
) -> None:
    # given Lark issues a token and accepts the message
    server.script([token_reply("t-first")], path=TOKEN_PATH)
    server.script([sent_reply("om_1")], path=MESSAGES_PATH)

    # when the approval is sent
    delivery = lark.notify(APPROVAL, KEY)

    # then the token was bought with the app's credentials ...
    assert delivery == Delivery(receipt={"message_id": "om_1"})
    token_request, message_request = server.requests
    assert token_request.method == "POST"
    assert token_request.path == TOKEN_PATH
    assert token_request.headers["content-type"] == "application/json; charset=utf-8"
    assert "authorization" not in token_request.headers
    assert token_request.json() == {"app_id": APP_ID, "app_secret": APP_SECRET}
    # ... and the card went to the chat, as a JSON string, under the key's uuid
    assert message_request.method == "POST"
    assert message_request.path == MESSAGES_PATH
    assert message_request.query == {"receive_id_type": ["chat_id"]}
    assert message_request.headers["authorization"] == "Bearer t-first"
    assert message_request.headers["content-type"] == "application/json; charset=utf-8"
    sent = message_request.json()
    assert set(sent) == {"receive_id", "msg_type", "content", "uuid"}
    assert sent["receive_id"] == CHAT
    assert sent["msg_type"] == "interactive"
    assert sent["uuid"] == lark_uuid(KEY)
    assert isinstance(sent["content"], str)
    assert json.loads(sent["content"]) == {
        "config": {"wide_screen_mode": True, "update_multi": True},
        "header": {
            "title": {"tag": "plain_text", "content": "Approve refund_payment?"},
            "template": "orange",
        },
        "elements": [
            {
                "tag": "div",
                "text": {"tag": "plain_text", "content": "The agent wants to refund order 1042."},
            },
            {
                "tag": "div",
                "text": {
                    "tag": "plain_text",
                    "content": 'Tool: refund_payment\n{\n  "amount": "12.50",\n  "order": 1042\n}',
                },
            },
            {
                "tag": "div",
                "fields": [
                    {"is_short": True, "text": {"tag": "plain_text", "content": "Agent: billing"}},
                    {"is_short": True, "text": {"tag": "plain_text", "content": "Tenant: acme"}},
                    {
                        "is_short": True,
                        "text": {
                            "tag": "plain_text",
                            "content": "Expires: 2026-01-01T01:00:00.000Z",
                        },
                    },
                ],
            },
            {
                "tag": "action",
                "actions": [
                    button("Approve", "primary", {"pendingId": "pend_01", "decision": "approve"}),
                    button("Deny", "danger", {"pendingId": "pend_01", "decision": "deny"}),
                ],
            },
        ],
    }


def test_the_uuid_is_a_stable_digest_within_lark_s_fifty_characters() -> None:
    assert len(KEY) > 50  # our keys do not fit as they are
    assert lark_uuid(KEY) == lark_uuid(KEY)
    assert len(lark_uuid(KEY)) <= 50
    assert lark_uuid(KEY) != lark_uuid(KEY + "x")


def test_the_token_is_fetched_once_and_reused_until_it_nears_expiry(
    server: RecordingServer, lark: LarkChannel, clock: ManualClock
) -> None:
    server.script([token_reply("t-first"), token_reply("t-second")], path=TOKEN_PATH)
    server.script([sent_reply("om_1"), sent_reply("om_2"), sent_reply("om_3")], path=MESSAGES_PATH)

    # two sends inside the token's life share one token
    lark.notify(APPROVAL, KEY)
    clock.advance(6000)
    lark.notify(QUESTION, KEY + "-2")
    # past (expire - margin) a new one is bought before the next send
    clock.advance(901)
    lark.notify(APPROVAL, KEY + "-3")

    assert len(requests_to(server, TOKEN_PATH)) == 2
    assert [r.headers["authorization"] for r in requests_to(server, MESSAGES_PATH)] == [
        "Bearer t-first",
        "Bearer t-first",
        "Bearer t-second",
    ]


def test_an_invalid_token_is_refreshed_once_and_the_send_retried_with_the_same_uuid(
    server: RecordingServer, lark: LarkChannel
) -> None:
    # given the cached token was revoked early
    server.script([token_reply("t-revoked"), token_reply("t-new")], path=TOKEN_PATH)
    server.script(
        [
            Reply(
                status=400,
                json={"code": 99991663, "msg": "Invalid access token for authorization."},
            ),
            sent_reply("om_1"),
        ],
        path=MESSAGES_PATH,
    )

    # when a card is sent
    delivery = lark.notify(APPROVAL, KEY)

    # then a new token was fetched and the same message sent again with it
    assert delivery.receipt == {"message_id": "om_1"}
    assert [request.path for request in server.requests] == [
        TOKEN_PATH,
        MESSAGES_PATH,
        TOKEN_PATH,
        MESSAGES_PATH,
    ]
    first, second = requests_to(server, MESSAGES_PATH)
    assert first.headers["authorization"] == "Bearer t-revoked"
    assert second.headers["authorization"] == "Bearer t-new"
    assert first.json() == second.json()


def test_a_fresh_token_that_is_still_invalid_is_not_refreshed_forever(
    server: RecordingServer, lark: LarkChannel
) -> None:
    invalid = Reply(status=400, json={"code": 99991663, "msg": "Invalid access token"})
    server.script([token_reply("t-1"), token_reply("t-2"), token_reply("t-3")], path=TOKEN_PATH)
    server.script([invalid, invalid, invalid], path=MESSAGES_PATH)

    with pytest.raises(SendFailed) as failure:
        lark.notify(APPROVAL, KEY)

    assert not failure.value.retryable
    assert len(requests_to(server, TOKEN_PATH)) == 2
    assert len(requests_to(server, MESSAGES_PATH)) == 2


def test_a_transient_failure_then_the_retry_carries_the_same_uuid(
    server: RecordingServer, lark: LarkChannel
) -> None:
    server.script([token_reply()], path=TOKEN_PATH)
    server.script([Reply(status=502, body="bad gateway"), sent_reply("om_1")], path=MESSAGES_PATH)

    with pytest.raises(SendFailed) as failure:
        lark.notify(APPROVAL, KEY)
    delivery = lark.notify(APPROVAL, KEY)

    assert failure.value.retryable
    assert failure.value.status == 502
    assert delivery.receipt == {"message_id": "om_1"}
    first, second = requests_to(server, MESSAGES_PATH)
    assert first.json()["uuid"] == second.json()["uuid"] == lark_uuid(KEY)


def test_a_retry_with_the_recorded_message_id_does_not_send_again(
    server: RecordingServer, lark: LarkChannel
) -> None:
    previous = Delivery(receipt={"message_id": "om_1"})

    assert lark.notify(APPROVAL, KEY, previous=previous) == previous
    assert server.requests == []


def test_the_rate_limit_is_retryable_after_lark_s_reset(
    server: RecordingServer, lark: LarkChannel
) -> None:
    server.script([token_reply()], path=TOKEN_PATH)
    server.script(
        [
            Reply(
                status=429,
                headers={"x-ogw-ratelimit-limit": "100", "x-ogw-ratelimit-reset": "12"},
                json={"code": 99991400, "msg": "request trigger frequency limit"},
            )
        ],
        path=MESSAGES_PATH,
    )

    with pytest.raises(SendFailed) as failure:
        lark.notify(APPROVAL, KEY)

    assert failure.value.retryable
    assert failure.value.retry_after == 12
    assert failure.value.status == 429
    assert "99991400" in failure.value.reason


@pytest.mark.parametrize(
    ("status", "code", "retryable"),
    [
        (400, 99991400, True),  # older APIs answer the rate limit with a 400
        (200, 230020, True),  # IM's own send-rate limit
        (500, 1500, True),
        (503, None, True),
        (400, 230002, False),  # the bot is not in the chat
        (400, 230001, False),  # an invalid parameter
        (403, 99991672, False),  # the app lacks the scope
        (200, 230099, False),
    ],
)
def test_codes_map_to_retryable_or_permanent(
    server: RecordingServer,
    lark: LarkChannel,
    status: int,
    code: int | None,
    retryable: bool,
) -> None:
    server.script([token_reply()], path=TOKEN_PATH)
    answer = (
        Reply(status=status, body="oops")
        if code is None
        else Reply(status=status, json={"code": code, "msg": "refused"})
    )
    server.script([answer], path=MESSAGES_PATH)

    with pytest.raises(SendFailed) as failure:
        lark.notify(APPROVAL, KEY)

    assert failure.value.retryable is retryable
    assert failure.value.channel == "lark"


def test_a_refused_app_secret_fails_before_any_message(
    server: RecordingServer, lark: LarkChannel
) -> None:
    server.script([Reply(json={"code": 10014, "msg": "app secret invalid"})], path=TOKEN_PATH)

    with pytest.raises(SendFailed) as failure:
        lark.notify(APPROVAL, KEY)

    assert not failure.value.retryable
    assert "10014" in failure.value.reason
    assert requests_to(server, MESSAGES_PATH) == []


def test_code_zero_without_a_message_id_is_not_retried(
    server: RecordingServer, lark: LarkChannel
) -> None:
    server.script([token_reply()], path=TOKEN_PATH)
    server.script([Reply(json={"code": 0, "msg": "success", "data": {}})], path=MESSAGES_PATH)

    with pytest.raises(SendFailed) as failure:
        lark.notify(APPROVAL, KEY)

    assert not failure.value.retryable


def test_a_refused_connection_is_retryable(http: httpx.Client, clock: ManualClock) -> None:
    url = nothing_listening()
    lark = LarkChannel("lark", CHAT, APP_ID, APP_SECRET, client=http, clock=clock, base_url=url)

    with pytest.raises(SendFailed) as failure:
        lark.notify(APPROVAL, KEY)

    assert failure.value.retryable


def test_a_question_card_has_a_button_per_option_and_a_link_to_the_answer_page() -> None:
    card = render_card(QUESTION)

    assert card["header"]["template"] == "blue"
    assert card["elements"][0] == {
        "tag": "div",
        "text": {"tag": "plain_text", "content": "Which account should be refunded?"},
    }
    assert card["elements"][-1] == {
        "tag": "action",
        "actions": [
            button("Checking", "default", {"pendingId": "pend_02", "answer": "Checking"}),
            button("Savings", "default", {"pendingId": "pend_02", "answer": "Savings"}),
            {
                "tag": "button",
                "text": {"tag": "plain_text", "content": "Answer in browser"},
                "type": "default",
                "url": "https://signoff.example/a/answer-tok",
            },
        ],
    }


def test_a_question_without_an_answer_url_links_a_view_page_and_shows_its_note() -> None:
    # what a channel with approvers is sent: no answerUrl, a view link, a note on where to answer
    card = render_card(
        QUESTION.model_copy(
            update={
                "answer_url": None,
                "link_url": "https://signoff.example/a/view-tok",
                "note": "Answer through the signoff API.",
            }
        )
    )

    assert {
        "tag": "div",
        "text": {"tag": "plain_text", "content": "Answer through the signoff API."},
    } in card["elements"]
    assert card["elements"][-1]["actions"][-1] == {
        "tag": "button",
        "text": {"tag": "plain_text", "content": "View in browser"},
        "type": "default",
        "url": "https://signoff.example/a/view-tok",
    }


def test_agent_text_is_plain_text_so_it_cannot_mention_everyone() -> None:
    sneaky = APPROVAL.model_copy(update={"body": "<at id=all></at> **urgent**"})

    card = render_card(sneaky)

    assert card["elements"][0] == {
        "tag": "div",
        "text": {"tag": "plain_text", "content": "<at id=all></at> **urgent**"},
    }


def test_an_approval_without_a_pending_id_is_refused_without_a_call(
    server: RecordingServer, lark: LarkChannel
) -> None:
    with pytest.raises(SendFailed):
        lark.notify(APPROVAL.model_copy(update={"pending_id": None}), KEY)

    assert server.requests == []


def test_update_outcome_patches_the_card_to_a_shared_one_without_buttons(
    server: RecordingServer, lark: LarkChannel
) -> None:
    server.script([token_reply("t-first")], path=TOKEN_PATH)
    server.script(
        [Reply(json={"code": 0, "msg": "success", "data": {}})], path=f"{MESSAGES_PATH}/om_1"
    )

    lark.update_outcome({"message_id": "om_1"}, "Approved by Alice (ou_123)")

    _, request = server.requests
    assert request.method == "PATCH"
    assert request.path == f"{MESSAGES_PATH}/om_1"
    assert request.query == {}
    assert request.headers["authorization"] == "Bearer t-first"
    assert request.headers["content-type"] == "application/json; charset=utf-8"
    sent = request.json()
    assert set(sent) == {"content"}
    assert json.loads(sent["content"]) == {
        "config": {"wide_screen_mode": True, "update_multi": True},
        "elements": [
            {"tag": "div", "text": {"tag": "plain_text", "content": "Approved by Alice (ou_123)"}}
        ],
    }


def test_update_outcome_of_an_old_message_is_permanent(
    server: RecordingServer, lark: LarkChannel
) -> None:
    server.script([token_reply()], path=TOKEN_PATH)
    server.script(
        [Reply(status=400, json={"code": 230031, "msg": "message too old to update"})],
        path=f"{MESSAGES_PATH}/om_1",
    )

    with pytest.raises(SendFailed) as failure:
        lark.update_outcome({"message_id": "om_1"}, "Denied")

    assert not failure.value.retryable


def test_update_outcome_without_a_message_id_is_refused_without_a_call(
    server: RecordingServer, lark: LarkChannel
) -> None:
    with pytest.raises(SendFailed):
        lark.update_outcome({}, "Denied")

    assert server.requests == []


def test_from_config_reads_the_app_secret_by_name(
    server: RecordingServer, http: httpx.Client, clock: ManualClock
) -> None:
    settings = LarkSettings.model_validate(
        {
            "type": "lark",
            "chatId": CHAT,
            "appId": APP_ID,
            "appSecret": {"secret": "lark-app-secret"},
            "verificationToken": {"secret": "lark-verification-token"},
            "encryptKey": {"secret": "lark-encrypt-key"},
            "approvers": ["ou_123"],
            "baseUrl": server.url,
        }
    )
    server.script([token_reply()], path=TOKEN_PATH)
    server.script([sent_reply()], path=MESSAGES_PATH)

    secrets = MemorySecrets({"lark-app-secret": "from-secrets"})
    lark = LarkChannel.from_config(
        settings, BuildContext(secrets=secrets, clock=clock, client=http)
    )
    lark.notify(APPROVAL, KEY)

    assert lark.name == "lark"
    assert server.requests[0].json() == {"app_id": APP_ID, "app_secret": "from-secrets"}
    assert settings.allows("ou_123")
    assert not settings.allows("ou_456")
