"""The Slack channel against a real HTTP server on loopback that checks Slack's requests."""

from __future__ import annotations

import json
from datetime import datetime
from urllib.parse import urlencode

import httpx
import pytest

from signoff.channels.base import Delivery
from signoff.channels.build import BuildContext
from signoff.channels.notification import Notification, idempotency_key
from signoff.channels.settings.slack import SlackSettings
from signoff.channels.slack.channel import SlackChannel, render_blocks
from signoff.channels.slack.interactions import parse_slack_action
from signoff.errors import SendFailed
from signoff.secrets.memory import MemorySecrets
from tests.support.chat import APPROVAL, EXPIRES, QUESTION, nothing_listening
from tests.support.chat import http as http
from tests.support.chat import server as server
from tests.support.http_server import RecordingServer, Reply

TOKEN = "xoxb-test-token"
CHANNEL = "C0123ABCD"
KEY = idempotency_key("run_01", "pend_01", "slack")
# Logical errors (HTTP 200, ok: false) that a later attempt can get past, and some that it cannot.
TRANSIENT_ERRORS = (
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
    "ratelimited",
)
PERMANENT_ERRORS = (
    "channel_not_found",
    "not_in_channel",
    "invalid_auth",
    "is_archived",
    "invalid_blocks",
)


def posted(ts: str = "1700000000.000100") -> Reply:
    return Reply(json={"ok": True, "channel": CHANNEL, "ts": ts, "message": {"ts": ts}})


@pytest.fixture
def slack(server: RecordingServer, http: httpx.Client) -> SlackChannel:
    return SlackChannel("slack", CHANNEL, TOKEN, client=http, base_url=server.url)


def test_an_approval_is_posted_once_as_block_kit_and_its_ts_recorded(
    server: RecordingServer, slack: SlackChannel
) -> None:
    # given Slack accepts the message
    server.script([posted()])

    # when the approval is sent
    delivery = slack.notify(APPROVAL, KEY)

    # then exactly one chat.postMessage went out, shaped as Slack expects
    assert delivery == Delivery(receipt={"ts": "1700000000.000100", "channel": CHANNEL})
    (request,) = server.requests
    assert request.method == "POST"
    assert request.path == "/chat.postMessage"
    assert request.query == {}
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json; charset=utf-8"
    epoch = int(datetime.fromisoformat(EXPIRES).timestamp())
    assert request.json() == {
        "channel": CHANNEL,
        "text": "Approve refund_payment?\nThe agent wants to refund order 1042.",
        "blocks": [
            {
                "type": "header",
                "text": {"type": "plain_text", "text": "Approve refund_payment?"},
            },
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": "The agent wants to refund order 1042."},
            },
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": "*Tool* `refund_payment`\n"
                    '```{\n  "amount": "12.50",\n  "order": 1042\n}```',
                },
            },
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": "Agent *billing* · tenant *acme* · expires "
                        f"<!date^{epoch}^{{date_short_pretty}} {{time}}|{EXPIRES}>",
                    }
                ],
            },
            {
                # Slack sends what is typed here with the click: a deny's reason
                "type": "input",
                "block_id": "signoff_reason",
                "optional": True,
                "label": {
                    "type": "plain_text",
                    "text": "Reason (optional; the agent reads it if you deny)",
                },
                "element": {
                    "type": "plain_text_input",
                    "action_id": "reason",
                    "max_length": 2000,
                },
            },
            {
                "type": "actions",
                "block_id": "signoff",
                "elements": [
                    {
                        "type": "button",
                        "action_id": "signoff_approve",
                        "text": {"type": "plain_text", "text": "Approve"},
                        "value": "pend_01",
                        "style": "primary",
                    },
                    {
                        "type": "button",
                        "action_id": "signoff_deny",
                        "text": {"type": "plain_text", "text": "Deny"},
                        "value": "pend_01",
                        "style": "danger",
                    },
                ],
            },
        ],
        "unfurl_links": False,
        "unfurl_media": False,
        # the hidden marker a retry looks for in the channel's history
        "metadata": {
            "event_type": "signoff_notification",
            "event_payload": {"idempotency_key": KEY},
        },
    }


def test_a_question_offers_one_button_per_option_and_a_link_to_the_answer_page(
    server: RecordingServer, slack: SlackChannel
) -> None:
    server.script([posted()])

    slack.notify(QUESTION, KEY)

    blocks = server.requests[0].json()["blocks"]
    assert blocks[1] == {
        "type": "section",
        "text": {"type": "mrkdwn", "text": "Which account should be refunded?"},
    }
    assert blocks[2] == {
        "type": "section",
        "text": {"type": "mrkdwn", "text": "1. Checking\n2. Savings"},
    }
    assert blocks[-1]["elements"] == [
        {
            "type": "button",
            "action_id": "signoff_answer:0",
            "text": {"type": "plain_text", "text": "Checking"},
            "value": '{"pendingId":"pend_02","answer":"Checking"}',
        },
        {
            "type": "button",
            "action_id": "signoff_answer:1",
            "text": {"type": "plain_text", "text": "Savings"},
            "value": '{"pendingId":"pend_02","answer":"Savings"}',
        },
        {
            "type": "button",
            "action_id": "signoff_open",
            "text": {"type": "plain_text", "text": "Answer in browser"},
            "value": "pend_02",
            "url": "https://signoff.example/a/answer-tok",
        },
    ]


def test_a_question_without_an_answer_url_links_a_view_page_and_shows_its_note() -> None:
    # what a channel with approvers is sent: no answerUrl, a view link, a note on where to answer
    notification = QUESTION.model_copy(
        update={
            "answer_url": None,
            "options": None,
            "link_url": "https://signoff.example/a/view-tok",
            "note": "Answer through the signoff API.",
        }
    )

    blocks = render_blocks(notification)

    assert {
        "type": "section",
        "text": {"type": "mrkdwn", "text": "Answer through the signoff API."},
    } in blocks
    assert blocks[-1]["elements"] == [
        {
            "type": "button",
            "action_id": "signoff_open",
            "text": {"type": "plain_text", "text": "View in browser"},
            "value": "pend_02",
            "url": "https://signoff.example/a/view-tok",
        }
    ]


def test_every_button_built_is_read_back_by_the_interaction_parser() -> None:
    # The renderer and the parser agree on action ids and values.
    for notification in (APPROVAL, QUESTION):
        buttons = render_blocks(notification)[-1]["elements"]
        for button in buttons:
            payload = {
                "type": "block_actions",
                "user": {"id": "U1"},
                "actions": [{**button, "block_id": "signoff", "action_ts": "1.2"}],
            }
            action = parse_slack_action(urlencode({"payload": json.dumps(payload)}))
            assert action.pending_id == notification.pending_id
            assert action.action_id == button["action_id"]
    answers = [
        parse_slack_action(
            urlencode(
                {
                    "payload": json.dumps(
                        {"type": "block_actions", "user": {"id": "U1"}, "actions": [button]}
                    )
                }
            )
        ).answer
        for button in render_blocks(QUESTION)[-1]["elements"][:2]
    ]
    assert answers == ["Checking", "Savings"]


def test_a_retry_carrying_the_recorded_ts_does_not_post_again(
    server: RecordingServer, slack: SlackChannel
) -> None:
    # given an earlier send succeeded but its recording was lost
    server.script([posted("1700000000.000100")])
    first = slack.notify(APPROVAL, KEY)

    # when the retry is handed that receipt
    again = slack.notify(APPROVAL, KEY, previous=first)

    # then Slack is not called a second time
    assert again == first
    assert len(server.requests) == 1


def test_a_previous_attempt_without_a_ts_is_posted(
    server: RecordingServer, slack: SlackChannel
) -> None:
    server.script([posted()])

    slack.notify(APPROVAL, KEY, previous=Delivery(receipt={}))

    assert len(server.requests) == 1


def history(*messages: dict[str, object]) -> Reply:
    return Reply(json={"ok": True, "messages": list(messages), "has_more": False})


def marked(key: str, ts: str) -> dict[str, object]:
    """A message in the history as Slack lists it with ``include_all_metadata``."""
    return {
        "type": "message",
        "ts": ts,
        "text": "Approve refund_payment?",
        "metadata": {
            "event_type": "signoff_notification",
            "event_payload": {"idempotency_key": key},
        },
    }


CREATED = 1_700_000_000.0
UNCONFIRMED = Delivery(unconfirmed_since=CREATED)


def test_an_unconfirmed_earlier_attempt_adopts_its_marked_message_from_the_history(
    server: RecordingServer, slack: SlackChannel
) -> None:
    # given the earlier attempt posted (the message carries its marker) and died
    # before the receipt was recorded
    server.script(
        [
            history(
                {"type": "message", "ts": "1700000050.000300", "text": "chatter"},
                marked(KEY, "1700000040.000200"),
            )
        ]
    )

    # when the retry runs
    delivery = slack.notify(APPROVAL, KEY, previous=UNCONFIRMED)

    # then it read the bounded history once and posted nothing
    assert delivery == Delivery(receipt={"ts": "1700000040.000200", "channel": CHANNEL})
    (request,) = server.requests
    assert request.path == "/conversations.history"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert request.form() == {
        "channel": [CHANNEL],
        "oldest": [f"{CREATED - 300:.6f}"],
        "limit": ["100"],
        "include_all_metadata": ["true"],
    }


def test_an_unconfirmed_attempt_without_its_marker_in_the_history_posts_once(
    server: RecordingServer, slack: SlackChannel
) -> None:
    # another notification's marker, and a forged one of another event type
    other = marked(idempotency_key("run_01", "pend_02", "slack"), "1700000041.000100")
    forged = marked(KEY, "1700000042.000100") | {
        "metadata": {"event_type": "other_app", "event_payload": {"idempotency_key": KEY}}
    }
    server.script([history(other, forged), posted()])

    delivery = slack.notify(APPROVAL, KEY, previous=UNCONFIRMED)

    assert delivery.receipt["ts"] == "1700000000.000100"
    assert [r.path for r in server.requests] == ["/conversations.history", "/chat.postMessage"]


def test_a_history_without_the_scope_still_posts(
    server: RecordingServer, slack: SlackChannel
) -> None:
    server.script([Reply(json={"ok": False, "error": "missing_scope"}), posted()])

    slack.notify(APPROVAL, KEY, previous=UNCONFIRMED)

    assert [r.path for r in server.requests] == ["/conversations.history", "/chat.postMessage"]


def test_a_history_failing_transiently_is_retried_before_any_post(
    server: RecordingServer, slack: SlackChannel
) -> None:
    server.script([Reply(json={"ok": False, "error": "internal_error"})])

    with pytest.raises(SendFailed) as failure:
        slack.notify(APPROVAL, KEY, previous=UNCONFIRMED)

    assert failure.value.retryable
    assert [r.path for r in server.requests] == ["/conversations.history"]


def test_a_first_attempt_reads_no_history(server: RecordingServer, slack: SlackChannel) -> None:
    server.script([posted()])

    slack.notify(APPROVAL, KEY)

    assert [r.path for r in server.requests] == ["/chat.postMessage"]


def test_a_transient_failure_then_the_retry_posts_one_message(
    server: RecordingServer, slack: SlackChannel
) -> None:
    # given Slack fails once with a transient error, then accepts
    server.script([Reply(json={"ok": False, "error": "internal_error"}), posted()])

    # when the send fails and is retried with the same key
    with pytest.raises(SendFailed) as failure:
        slack.notify(APPROVAL, KEY)
    delivery = slack.notify(APPROVAL, KEY)

    # then the failure was retryable and the retry sent the same message
    assert failure.value.retryable
    assert delivery.receipt["ts"] == "1700000000.000100"
    first, second = server.requests
    assert first.json() == second.json()


def test_ratelimited_is_retryable_after_the_time_slack_asks(
    server: RecordingServer, slack: SlackChannel
) -> None:
    server.script(
        [
            Reply(
                status=429,
                headers={"Retry-After": "30"},
                json={"ok": False, "error": "ratelimited"},
            )
        ]
    )

    with pytest.raises(SendFailed) as failure:
        slack.notify(APPROVAL, KEY)

    assert failure.value.retryable
    assert failure.value.retry_after == 30
    assert failure.value.status == 429
    assert failure.value.channel == "slack"


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        *((error, True) for error in TRANSIENT_ERRORS),
        *((error, False) for error in PERMANENT_ERRORS),
    ],
)
def test_logical_errors_are_retried_only_when_transient(
    server: RecordingServer, slack: SlackChannel, error: str, retryable: bool
) -> None:
    server.script([Reply(json={"ok": False, "error": error})])

    with pytest.raises(SendFailed) as failure:
        slack.notify(APPROVAL, KEY)

    assert failure.value.retryable is retryable
    assert failure.value.reason == f"chat.postMessage: {error}"


@pytest.mark.parametrize(("status", "retryable"), [(500, True), (503, True), (404, False)])
def test_http_failures_follow_the_status(
    server: RecordingServer, slack: SlackChannel, status: int, retryable: bool
) -> None:
    server.script([Reply(status=status, body="<html>upstream</html>")])

    with pytest.raises(SendFailed) as failure:
        slack.notify(APPROVAL, KEY)

    assert failure.value.retryable is retryable
    assert failure.value.status == status


def test_a_200_that_is_not_json_is_retryable(server: RecordingServer, slack: SlackChannel) -> None:
    server.script([Reply(body="<html>maintenance</html>")])

    with pytest.raises(SendFailed) as failure:
        slack.notify(APPROVAL, KEY)

    assert failure.value.retryable


def test_ok_without_a_ts_is_not_retried(server: RecordingServer, slack: SlackChannel) -> None:
    # The message exists; a retry would post it twice.
    server.script([Reply(json={"ok": True, "channel": CHANNEL})])

    with pytest.raises(SendFailed) as failure:
        slack.notify(APPROVAL, KEY)

    assert not failure.value.retryable


def test_a_timeout_is_retryable(server: RecordingServer) -> None:
    server.script([Reply(delay=1.0, json={"ok": True, "ts": "1.2"})])
    with httpx.Client(timeout=0.2) as client:
        slack = SlackChannel("slack", CHANNEL, TOKEN, client=client, base_url=server.url)

        with pytest.raises(SendFailed) as failure:
            slack.notify(APPROVAL, KEY)

    assert failure.value.retryable
    assert "timed out" in failure.value.reason


def test_a_refused_connection_is_retryable(http: httpx.Client) -> None:
    slack = SlackChannel("slack", CHANNEL, TOKEN, client=http, base_url=nothing_listening())

    with pytest.raises(SendFailed) as failure:
        slack.notify(APPROVAL, KEY)

    assert failure.value.retryable


def test_an_approval_without_a_pending_id_is_refused_without_a_call(
    server: RecordingServer, slack: SlackChannel
) -> None:
    with pytest.raises(SendFailed) as failure:
        slack.notify(APPROVAL.model_copy(update={"pending_id": None}), KEY)

    assert not failure.value.retryable
    assert server.requests == []


def test_agent_text_cannot_mention_the_channel_or_forge_links(
    server: RecordingServer, slack: SlackChannel
) -> None:
    server.script([posted()])
    sneaky = APPROVAL.model_copy(
        update={
            "body": "<!channel> see <https://evil.example|your bank> & pay",
            "args": {"x": "<@U1>"},
        }
    )

    slack.notify(sneaky, KEY)

    sent = server.requests[0].json()
    assert sent["blocks"][1]["text"]["text"] == (
        "&lt;!channel&gt; see &lt;https://evil.example|your bank&gt; &amp; pay"
    )
    assert "&lt;@U1&gt;" in sent["blocks"][2]["text"]["text"]
    assert "<!channel>" not in sent["text"]


def test_long_texts_are_clipped_to_block_kit_limits() -> None:
    long = APPROVAL.model_copy(
        update={"title": "T" * 400, "body": "&" * 4000, "args": {"blob": "x" * 5000}}
    )

    blocks = render_blocks(long)

    assert len(blocks[0]["text"]["text"]) == 150
    assert len(blocks[1]["text"]["text"]) <= 3000
    assert blocks[1]["text"]["text"].endswith("&amp;…")  # never half an entity
    assert len(blocks[2]["text"]["text"]) <= 3000
    assert blocks[2]["text"]["text"].endswith("…```")


def test_an_option_too_long_for_a_button_value_is_left_to_the_answer_page() -> None:
    question = QUESTION.model_copy(update={"options": ["Short", "L" * 2100]})

    buttons = render_blocks(question)[-1]["elements"]

    assert [button["action_id"] for button in buttons] == ["signoff_answer:0", "signoff_open"]


def test_info_notifications_have_no_buttons() -> None:
    info = Notification(kind="info", agent="billing", run_id="run_01", title="Run started", body="")

    assert [block["type"] for block in render_blocks(info)] == ["header", "context"]


def test_update_outcome_replaces_the_message_without_buttons(
    server: RecordingServer, slack: SlackChannel
) -> None:
    server.script([Reply(json={"ok": True, "channel": CHANNEL, "ts": "1700000000.000100"})])

    slack.update_outcome(
        {"ts": "1700000000.000100", "channel": CHANNEL}, "Approved by alice <U1> at 12:00"
    )

    (request,) = server.requests
    assert request.method == "POST"
    assert request.path == "/chat.update"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json; charset=utf-8"
    assert request.json() == {
        "channel": CHANNEL,
        "ts": "1700000000.000100",
        "text": "Approved by alice &lt;U1&gt; at 12:00",
        "blocks": [
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": "Approved by alice &lt;U1&gt; at 12:00"},
            }
        ],
    }


def test_update_outcome_of_a_vanished_message_is_permanent(
    server: RecordingServer, slack: SlackChannel
) -> None:
    server.script([Reply(json={"ok": False, "error": "message_not_found"})])

    with pytest.raises(SendFailed) as failure:
        slack.update_outcome({"ts": "1.2", "channel": CHANNEL}, "Denied")

    assert not failure.value.retryable
    assert failure.value.reason == "chat.update: message_not_found"


def test_update_outcome_without_a_ts_is_refused_without_a_call(
    server: RecordingServer, slack: SlackChannel
) -> None:
    with pytest.raises(SendFailed):
        slack.update_outcome({}, "Denied")

    assert server.requests == []


def test_from_config_reads_the_bot_token_by_name(
    server: RecordingServer, http: httpx.Client
) -> None:
    settings = SlackSettings.model_validate(
        {
            "type": "slack",
            "channelId": CHANNEL,
            "botToken": {"secret": "slack-bot-token"},
            "signingSecret": {"secret": "slack-signing-secret"},
            "approvers": ["U1"],
            "baseUrl": server.url,
        }
    )
    secrets = MemorySecrets({"slack-bot-token": "xoxb-from-secrets"})
    server.script([posted()])

    slack = SlackChannel.from_config(settings, BuildContext(secrets=secrets, client=http))
    slack.notify(APPROVAL, KEY)

    assert slack.name == "slack"
    assert server.requests[0].headers["authorization"] == "Bearer xoxb-from-secrets"
    assert settings.allows("U1")
    assert not settings.allows("U2")
    anyone = settings.model_copy(update={"approvers": []})
    assert anyone.allows("anyone")
