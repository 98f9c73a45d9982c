"""The OpenClaw channel against a gateway's hooks endpoint on loopback that enforces its rules.

One agent turn per notification: every attempt carries the hook token in the
``Authorization`` header only and the seed's ``Idempotency-Key``, and the message
is the same bytes on every retry, so the gateway's replay cache answers a repeat
with the first run; every status the hooks handler answers is classified.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest

from signoff.aws.channels import channel_secret_names
from signoff.channels.base import Delivery
from signoff.channels.build import build_channels
from signoff.channels.config import load_channels
from signoff.channels.notification import Notification, idempotency_key
from signoff.channels.openclaw import (
    INSTRUCTIONS,
    HookRoute,
    OpenClawChannel,
    gateway_key,
    render_message,
)
from signoff.clock import ManualClock
from signoff.errors import ConfigError, SecretMissing, SendFailed, StoreUnavailable
from signoff.keys.tokens import Signer
from signoff.notify.compose import Composer
from signoff.secrets.memory import MemorySecrets
from tests.support.builders import pending_approval, pending_question, question_notification
from tests.support.http_server import Reply
from tests.support.openclaw_gateway import REPLAY_TTL, FakeOpenClaw

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

TOKEN = "hook-secret"
KEY = idempotency_key("run-1", "p1", "ops-claw")
COMPOSER = Composer(signer=Signer({"k1": b"k" * 32}, "k1"), public_url="https://api.example.com")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5.0) as client:
        yield client


@pytest.fixture
def gateway(clock: ManualClock) -> Iterator[FakeOpenClaw]:
    with FakeOpenClaw(TOKEN, now=lambda: clock.now().timestamp()) as fake:
        yield fake


def channel_at(
    url: str,
    http: httpx.Client,
    clock: ManualClock,
    *,
    token: str | Callable[[], str] = TOKEN,
    hooks_path: str = "/hooks",
    route: HookRoute | None = None,
) -> OpenClawChannel:
    return OpenClawChannel(
        "ops-claw",
        url,
        token,
        client=http,
        clock=clock,
        hooks_path=hooks_path,
        route=route,
        allow_private=True,
    )


def approval() -> Notification:
    """An approval composed from its item, as the notifier sends it."""
    return COMPOSER.for_item(
        pending_approval(
            summary="Refund 25 USD on order A-17",
            request="My order A-17 came broken, refund me",
            said="I will refund the 25 USD.",
            reason="matched rule 'refunds-need-approval'",
        )
    )


def refused(send: Callable[[], Delivery]) -> SendFailed:
    with pytest.raises(SendFailed) as failed:
        send()
    assert failed.value.channel == "ops-claw"
    return failed.value


def test_a_send_starts_one_run_with_the_token_in_the_header_only(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    route = HookRoute(name="signoff", agent_id="ops", deliver=True, channel="telegram", to="-100")
    delivery = channel_at(gateway.url, http, clock, route=route).notify(approval(), KEY)

    (request,) = gateway.server.requests
    assert (request.method, request.path, request.query) == ("POST", "/hooks/agent", {})
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["idempotency-key"] == "run-1:p1"  # the seed's runId:approvalId
    assert TOKEN not in request.text()
    body = request.json()
    assert {k: v for k, v in body.items() if k != "message"} == {
        "name": "signoff",
        "agentId": "ops",
        "deliver": True,
        "channel": "telegram",
        "to": "-100",
    }
    (run,) = gateway.runs
    assert delivery.receipt == {"runId": run["runId"]}
    assert (run["agentId"], run["channel"], run["to"]) == ("ops", "telegram", "-100")


def test_the_message_is_the_card_with_the_confirmation_page_s_link(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    notification = approval()
    channel_at(gateway.url, http, clock).notify(notification, KEY)

    message = gateway.runs[0]["message"]
    assert message.startswith(INSTRUCTIONS)
    for part in (
        "Refund 25 USD on order A-17",  # the summary
        "Request: My order A-17 came broken, refund me",
        "Why it asks: matched rule 'refunds-need-approval'",
        "For: agent refunds · tenant acme · production",
        "Expires: in 1 hour (2026-01-01 01:00 UTC)",  # as of the request, not the send
        '"amount": 25',
    ):
        assert part in message
    assert message.endswith(f"Decide here: {notification.link_url}")
    # only the page whose GET decides nothing: no one-click approve or deny route
    assert notification.approve_url and notification.approve_url not in message
    assert "/approvals/" not in message


def test_retries_carry_the_same_key_and_body_so_the_gateway_starts_one_run(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    channel = channel_at(gateway.url, http, clock)
    gateway.fail_next(1, retryable=True)
    assert refused(lambda: channel.notify(approval(), KEY)).retryable is True
    first = channel.notify(approval(), KEY)
    clock.advance(120)  # the card is drawn as of the request: the same text later
    # an attempt whose record was lost: composed again, sent again, answered with the run
    again = channel.notify(approval(), KEY, previous=Delivery(unconfirmed_since=1.0))

    sent = [r for r in gateway.server.requests if r.path == "/hooks/agent"]
    assert len(sent) == 3
    assert {r.headers["idempotency-key"] for r in sent} == {"run-1:p1"}
    assert len({r.body for r in sent}) == 1
    assert gateway.run_keys() == ["run-1:p1"]
    assert again.receipt == first.receipt


def test_a_recorded_run_is_the_notification_and_nothing_is_sent(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    recorded = Delivery(receipt={"runId": "r-1"})
    assert channel_at(gateway.url, http, clock).notify(approval(), KEY, previous=recorded) is (
        recorded
    )
    assert gateway.server.requests == []


def test_past_the_gateway_s_replay_window_a_lost_record_means_a_second_run(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    # The gateway keeps its replays 5 minutes, in memory: the documented limit.
    channel = channel_at(gateway.url, http, clock)
    channel.notify(approval(), KEY)
    clock.advance(REPLAY_TTL)
    channel.notify(approval(), KEY, previous=Delivery(unconfirmed_since=1.0))
    assert gateway.run_keys() == ["run-1:p1", "run-1:p1"]


def test_two_notifications_start_two_runs_with_their_own_keys(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    channel = channel_at(gateway.url, http, clock)
    channel.notify(approval(), KEY)
    second = COMPOSER.for_item(pending_question("p2"))
    channel.notify(second, idempotency_key("run-1", "p2", "ops-claw"))
    assert gateway.run_keys() == ["run-1:p1", "run-1:p2"]


def test_the_gateway_refuses_a_token_in_the_query_string_even_with_a_good_header(
    gateway: FakeOpenClaw, http: httpx.Client
) -> None:
    answer = http.post(
        f"{gateway.url}/hooks/agent?token={TOKEN}",
        json={"message": "hi"},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert answer.status_code == 400
    assert "query parameters are not allowed" in answer.text
    assert gateway.runs == []


def test_a_wrong_token_is_permanent_and_a_throttled_one_retryable_after_its_wait(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    channel = channel_at(gateway.url, http, clock, token="wrong")
    first = refused(lambda: channel.notify(approval(), KEY))
    assert (first.status, first.retryable) == (401, False)
    assert "hooks.token" in first.reason
    for _ in range(19):
        refused(lambda: channel.notify(approval(), KEY))
    # 20 failures within the minute: the gateway's limiter answers 429 for a minute
    throttled = refused(lambda: channel.notify(approval(), KEY))
    assert (throttled.status, throttled.retryable, throttled.retry_after) == (429, True, 60.0)
    assert gateway.runs == []


@pytest.mark.parametrize(
    ("gateway_settings", "route", "problem"),
    [
        (
            {"allowed_agent_ids": ["ops"]},
            HookRoute(agent_id="nobody"),  # unknown: the default agent, which is not allowed
            "agentId is not allowed by hooks.allowedAgentIds",
        ),
        ({"unknown_agents": "refuse"}, HookRoute(agent_id="nobody"), 'unknown agentId "nobody"'),
        ({}, HookRoute(session_key_prefix="hook:signoff:"), "set hooks.allowRequestSessionKey"),
        (
            {"allow_request_session_key": True, "allowed_session_key_prefixes": ["hook:ops:"]},
            HookRoute(session_key_prefix="hook:signoff:"),
            "sessionKey must start with one of: hook:ops:",
        ),
        ({}, HookRoute(channel="carrier-pigeon", to="x"), "channel must be last|telegram"),
    ],
    ids=["agent-not-allowed", "unknown-agent", "session-keys-off", "session-prefix", "channel"],
)
def test_what_the_gateway_refuses_in_the_body_is_permanent_and_says_why(
    http: httpx.Client,
    clock: ManualClock,
    gateway_settings: dict[str, Any],
    route: HookRoute,
    problem: str,
) -> None:
    with FakeOpenClaw(TOKEN, **gateway_settings) as gateway:
        channel = channel_at(gateway.url, http, clock, route=route)
        failed = refused(lambda: channel.notify(approval(), KEY))
        assert (failed.status, failed.retryable) == (400, False)
        assert problem in failed.reason
        assert gateway.runs == []


def test_an_unknown_agent_runs_as_the_default_one_where_the_gateway_allows_it(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    channel_at(gateway.url, http, clock, route=HookRoute(agent_id="nobody")).notify(approval(), KEY)
    assert gateway.runs[0]["agentId"] == "main"


def test_session_keys_where_allowed_are_one_per_run(http: httpx.Client, clock: ManualClock) -> None:
    with FakeOpenClaw(TOKEN, allow_request_session_key=True) as gateway:
        channel = channel_at(
            gateway.url, http, clock, route=HookRoute(session_key_prefix="hook:signoff:")
        )
        channel.notify(approval(), KEY)
        channel.notify(
            COMPOSER.for_item(pending_question("p2")), idempotency_key("run-1", "p2", "ops-claw")
        )
        assert [r["sessionKey"] for r in gateway.runs] == ["hook:signoff:run-1"] * 2


def test_a_wrong_hooks_path_and_an_oversized_body_are_permanent(
    http: httpx.Client, clock: ManualClock
) -> None:
    with FakeOpenClaw(TOKEN, base_path="/claw-hooks", max_body_bytes=200) as gateway:
        wrong_path = refused(lambda: channel_at(gateway.url, http, clock).notify(approval(), KEY))
        assert (wrong_path.status, wrong_path.retryable) == (404, False)
        assert "hooksPath" in wrong_path.reason
        channel = channel_at(gateway.url, http, clock, hooks_path="/claw-hooks")
        too_large = refused(lambda: channel.notify(approval(), KEY))
        assert (too_large.status, too_large.retryable) == (413, False)
        assert "payload too large" in too_large.reason


@pytest.mark.parametrize(
    ("reply", "retryable"),
    [
        (Reply(status=408, json={"ok": False, "error": "request body timeout"}), True),
        (Reply(status=409, json={"ok": False, "error": "session changed"}), True),
        (Reply(status=500, json={"ok": False, "error": "hook mapping failed"}), True),
        (Reply(status=502, json={"ok": False, "error": "failed before the runner"}), True),
        (Reply(status=503, json={"ok": False, "error": "admission timeout"}), True),
        (Reply(status=429, headers={"Retry-After": "7"}), True),
        (Reply(status=403), False),
        (Reply(status=405, headers={"Allow": "POST"}), False),
        (Reply(status=302, headers={"Location": "https://elsewhere.example/"}), False),
    ],
    ids=lambda value: str(value.status) if isinstance(value, Reply) else str(value),
)
def test_every_other_status_is_classified(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock, reply: Reply, retryable: bool
) -> None:
    gateway.answer_next(reply)
    failed = refused(lambda: channel_at(gateway.url, http, clock).notify(approval(), KEY))
    assert (failed.status, failed.retryable) == (reply.status, retryable)
    if reply.status == 429:
        assert failed.retry_after == 7.0
    if reply.status == 302:
        assert "redirects are not followed" in failed.reason


def test_the_token_is_read_at_each_send_and_its_failures_are_classified(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    secrets = MemorySecrets({"claw": TOKEN})
    channel = channel_at(gateway.url, http, clock, token=lambda: secrets.get("claw"))
    channel.notify(approval(), KEY)
    secrets.set("claw", "rotated")
    assert refused(lambda: channel.notify(approval(), KEY)).status == 401

    def missing() -> str:
        raise SecretMissing("claw")

    def throttled() -> str:
        raise StoreUnavailable("throttled")

    assert (
        refused(
            lambda: channel_at(gateway.url, http, clock, token=missing).notify(approval(), KEY)
        ).retryable
        is False
    )
    assert (
        refused(
            lambda: channel_at(gateway.url, http, clock, token=throttled).notify(approval(), KEY)
        ).retryable
        is True
    )


def test_a_gateway_that_cannot_be_reached_is_retryable(
    http: httpx.Client, clock: ManualClock
) -> None:
    with FakeOpenClaw(TOKEN) as gateway:
        url = gateway.url
    failed = refused(lambda: channel_at(url, http, clock).notify(approval(), KEY))
    assert failed.retryable is True


def test_a_public_gateway_must_be_https_and_resolve_to_public_addresses(
    http: httpx.Client, clock: ManualClock
) -> None:
    def channel(url: str, addresses: list[str]) -> OpenClawChannel:
        return OpenClawChannel(
            "ops-claw", url, TOKEN, client=http, clock=clock, resolver=lambda host, port: addresses
        )

    plain = refused(
        lambda: channel("http://claw.example.com", ["93.184.216.34"]).notify(approval(), KEY)
    )
    assert (plain.retryable, "gatewayUrl must use https" in plain.reason) == (False, True)
    inside = refused(
        lambda: channel("https://claw.example.com", ["10.0.0.7"]).notify(approval(), KEY)
    )
    assert inside.retryable is False
    assert "private gateway URLs need allowPrivate: true" in inside.reason


def test_questions_and_the_other_kinds_read_as_the_chat_channels_send_them() -> None:
    question = COMPOSER.for_item(pending_question())
    text = render_message(question, instructions="")
    assert text.startswith("refunds asks: Which warehouse ships it?")
    assert "Suggested answers:\n  - Berlin\n  - Lyon" in text
    assert text.endswith(f"Answer here: {question.link_url}")
    # a question not composed from an item: its question and numbered options
    plain = render_message(question_notification(), instructions="")
    assert "Which order do you mean?\n\n1. A-17\n2. A-18" in plain
    for kind in ("stuck", "result", "info"):
        note = Notification(
            kind=kind,
            agent="refunds",
            run_id="run-1",
            title=f"{kind} title",
            body="what happened",
            link_url="https://api.example.com/a/x",
        )
        assert render_message(note, instructions="") == f"{kind} title\n\nwhat happened"


def test_hidden_characters_in_the_message_are_shown_escaped() -> None:
    note = Notification(kind="info", agent="a", run_id="r", title="t", body="pay\u202eevil")
    assert "\\u202e" in render_message(note)


def test_an_over_long_key_is_sent_as_a_stable_digest() -> None:
    key = "run-1:" + "p" * 300
    assert gateway_key("run-1:p1") == "run-1:p1"
    assert gateway_key(key) == gateway_key(key)
    assert gateway_key(key).startswith("signoff-sha256:") and len(gateway_key(key)) <= 256


def test_channels_yaml_builds_the_channel_and_names_its_secret(tmp_path: Path) -> None:
    with FakeOpenClaw(TOKEN, allow_request_session_key=True) as gateway:
        file = tmp_path / "channels.yaml"
        file.write_text(
            "channels:\n"
            f"  ops-claw: {{type: openclaw, gatewayUrl: '{gateway.url}', hooksPath: hooks/,"
            " token: {secret: claw-hooks}, agentId: ops, channel: slack, to: C0123,"
            " hookName: Payments, sessionKeys: true, allowPrivate: true}\n"
        )
        config = load_channels(file)
        assert channel_secret_names(config) == ["claw-hooks"]
        assert config.channels["ops-claw"].hooks_path == "/hooks"  # type: ignore[attr-defined]
        secrets = MemorySecrets({"claw-hooks": TOKEN})
        channel = build_channels(config, secrets, clock=ManualClock())["ops-claw"]
        channel.notify(approval(), KEY)
        (run,) = gateway.runs
        assert (run["agentId"], run["channel"], run["to"], run["name"]) == (
            "ops",
            "slack",
            "C0123",
            "Payments",
        )
        assert run["sessionKey"] == "hook:signoff:run-1"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("gatewayUrl: 'https://claw.example.com', token: hunter2", "inline"),
        ("gatewayUrl: 'https://claw.example.com/?token=x', token: {secret: t}", "query"),
        ("gatewayUrl: 'https://claw.example.com', token: {secret: t}, channel: slack", "together"),
        ("gatewayUrl: 'https://claw.example.com', token: {secret: t}, to: C1", "together"),
        (
            "gatewayUrl: 'https://claw.example.com', token: {secret: t}, channel: last, to: x",
            "default",
        ),
        (
            "gatewayUrl: 'https://claw.example.com', token: {secret: t}, deliver: false,"
            " channel: slack, to: C1",
            "deliver",
        ),
        ("gatewayUrl: 'https://claw.example.com', token: {secret: t}, hooksPath: /", "hooksPath"),
    ],
)
def test_bad_settings_are_refused_when_loaded(tmp_path: Path, entry: str, problem: str) -> None:
    file = tmp_path / "channels.yaml"
    file.write_text(f"channels:\n  ops-claw: {{type: openclaw, {entry}}}\n")
    with pytest.raises(ConfigError, match=problem):
        load_channels(file)


@pytest.mark.parametrize("url", ["http://claw.example.com", "https://10.0.0.7"])
def test_a_private_or_plain_gateway_url_fails_the_build_without_allow_private(
    tmp_path: Path, url: str
) -> None:
    file = tmp_path / "channels.yaml"
    file.write_text(
        f"channels:\n  ops-claw: {{type: openclaw, gatewayUrl: '{url}', token: {{secret: t}}}}\n"
    )
    with pytest.raises(ValueError, match="gatewayUrl"):
        build_channels(load_channels(file), MemorySecrets({"t": TOKEN}), clock=ManualClock())


def test_a_refusal_quotes_only_the_gateway_s_own_reason_never_an_echoed_request(
    gateway: FakeOpenClaw, http: httpx.Client, clock: ManualClock
) -> None:
    notification = approval()
    echo = Reply(
        status=400,
        body=f"bad request: {render_message(notification)}",
        headers={"Content-Type": "text/plain; charset=utf-8"},
    )
    gateway.answer_next(echo, Reply(status=400, json={"ok": False, "error": "message required"}))
    channel = channel_at(gateway.url, http, clock)

    echoed = refused(lambda: channel.notify(notification, KEY))
    assert notification.resume_token and notification.resume_token not in echoed.reason
    assert refused(lambda: channel.notify(notification, KEY)).reason.endswith("message required")
