"""The GitHub channel against a GitHub REST API on loopback: the exact calls it makes.

A comment per notification, found again by its hidden marker before posting, so
a crash between the post and its record leaves one comment; rate limits are
retryable after GitHub's reset, a bad token or a missing issue is permanent.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

import httpx
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from signoff.aws.channels import channel_secret_names
from signoff.channels.base import Delivery
from signoff.channels.build import build_channels
from signoff.channels.config import load_channels
from signoff.channels.github.channel import GitHubApp, GitHubChannel, marker
from signoff.channels.notification import idempotency_key
from signoff.clock import ManualClock
from signoff.errors import ConfigError, SecretMissing, SendFailed
from signoff.secrets.memory import MemorySecrets
from tests.support.builders import approval_notification, question_notification
from tests.support.github_api import FakeGitHub
from tests.support.http_server import RecordingServer, Reply

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

REPO, ISSUE = "acme/payments", 42
COMMENTS = f"/repos/{REPO}/issues/{ISSUE}/comments"
KEY = idempotency_key("run-1", "p1", "ops-github")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def github(clock: ManualClock) -> Iterator[FakeGitHub]:
    with FakeGitHub(REPO, ISSUE, now=lambda: clock.now().timestamp()) as fake:
        yield fake


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5.0) as client:
        yield client


def channel_at(
    url: str, http: httpx.Client, clock: ManualClock, token: str | Callable[[], str] = "ghs_x"
) -> GitHubChannel:
    return GitHubChannel(
        "ops-github", REPO, ISSUE, token, client=http, clock=clock, api_url=url, allow_private=True
    )


def test_the_first_send_looks_for_its_marker_then_posts_one_marked_comment(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    delivery = channel_at(github.url, http, clock).notify(approval_notification(), KEY)

    listing, post = github.server.requests
    assert (listing.method, listing.path) == ("GET", COMMENTS)
    # bounded: since the row could exist (now, less the clock margin), 100 a page
    assert listing.query == {
        "per_page": ["100"],
        "since": ["2025-12-31T23:55:00Z"],
        "page": ["1"],
    }
    assert (post.method, post.path) == ("POST", COMMENTS)
    for request in (listing, post):
        assert request.headers["authorization"] == "Bearer ghs_x"
        assert request.headers["accept"] == "application/vnd.github+json"
        assert request.headers["x-github-api-version"] == "2022-11-28"
        assert request.headers["user-agent"].startswith("signoff")
    body = post.json()["body"]
    assert body.startswith(f"<!-- signoff:{KEY} -->\n")
    assert "issue\\_refund" in body and '"amount": 25' in body
    # the confirmation page, never the one-click routes
    note = approval_notification()
    assert f"(<{note.link_url}>)" in body
    assert note.approve_url is not None and note.approve_url not in body
    assert note.deny_url is not None and note.deny_url not in body
    assert delivery.receipt["commentId"] == "1001"
    assert len(github.comments) == 1


def test_a_crash_after_the_post_before_its_record_posts_nothing_on_retry(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    # Given a comment posted by an attempt whose receipt was never recorded
    channel = channel_at(github.url, http, clock)
    created = clock.now().timestamp()
    first = channel.notify(approval_notification(), KEY)
    clock.advance(90)

    # When the notifier retries it, knowing only that an earlier attempt left no receipt
    again = channel.notify(approval_notification(), KEY, Delivery(unconfirmed_since=created))

    # Then the retry lists the comments since the row was created, adopts the marked one
    assert github.calls() == [("GET", COMMENTS), ("POST", COMMENTS), ("GET", COMMENTS)]
    assert github.server.requests[2].query["since"] == ["2025-12-31T23:55:00Z"]
    assert again.receipt == first.receipt
    assert len(github.comments) == 1


def test_a_recorded_receipt_makes_no_request(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    sent = Delivery(receipt={"commentId": "1001"})

    assert channel_at(github.url, http, clock).notify(approval_notification(), KEY, sent) is sent
    assert github.server.requests == []


def test_the_marker_is_found_on_the_newest_page_and_only_at_the_start_of_a_comment(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    # Given 250 comments since the row, one quoting the marker, the last one carrying it
    for n in range(248):
        github.add(f"comment {n}")
    github.add(f"> someone quoted {marker(KEY)}")
    github.add(f"{marker(KEY)}\n### Approve?")

    delivery = channel_at(github.url, http, clock).notify(
        approval_notification(), KEY, Delivery(unconfirmed_since=clock.now().timestamp())
    )

    # Then it read page 1, then the last page (the newest), and posted nothing
    assert [r.query["page"] for r in github.server.requests] == [["1"], ["3"]]
    assert delivery.receipt["commentId"] == "1250"
    assert len(github.comments) == 250


def test_model_text_cannot_format_ping_or_close_the_code_block(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    note = approval_notification(
        title="Refund @octocat [now](https://evil.example)",
        body="<!-- signoff:other --> hi\u202e",
        args={"note": "```\n@team"},
    )

    channel_at(github.url, http, clock).notify(note, KEY)

    body = github.server.requests[1].json()["body"]
    assert "@octocat" not in body and "&#64;octocat" in body
    assert "\\[now\\]\\(https://evil\\.example\\)" in body
    assert "<!-- signoff:other" not in body and "\\u202e" in body
    assert body.count(marker(KEY)) == 1
    # the arguments sit in a fence longer than any backtick run in them
    assert "````json\n" in body


def test_a_question_links_its_confirmation_page(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    note = question_notification()

    channel_at(github.url, http, clock).notify(note, KEY)

    body = github.server.requests[1].json()["body"]
    assert f"(<{note.link_url}>)" in body
    assert note.answer_url is None or note.answer_url not in body


@pytest.mark.parametrize(
    "headers",
    [
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(1767225600 + 120)},
        {"retry-after": "120"},  # the secondary rate limit
        {"x-ratelimit-remaining": "0"},  # spent, no reset given: retried on the usual backoff
    ],
)
@pytest.mark.parametrize("status", [403, 429])
def test_a_rate_limit_is_retryable_after_githubs_reset(
    http: httpx.Client, clock: ManualClock, headers: dict[str, str], status: int
) -> None:
    # 2026-01-01T00:00:00Z is 1767225600: the reset is two minutes away
    with RecordingServer() as server:
        server.script(
            [Reply(json=[]), Reply(status=status, json={"message": "limit"}, headers=headers)]
        )
        with pytest.raises(SendFailed) as failed:
            channel_at(server.url, http, clock).notify(approval_notification(), KEY)

    assert failed.value.retryable is True
    assert failed.value.status == status
    expected = None if headers == {"x-ratelimit-remaining": "0"} else pytest.approx(120)
    assert failed.value.retry_after == expected


def test_a_403_that_is_no_rate_limit_is_permanent(http: httpx.Client, clock: ManualClock) -> None:
    with RecordingServer() as server:
        server.script(
            [Reply(status=403, json={"message": "Resource not accessible by integration"})]
        )
        with pytest.raises(SendFailed) as failed:
            channel_at(server.url, http, clock).notify(approval_notification(), KEY)

    assert failed.value.retryable is False
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [401, 404, 422])
@pytest.mark.parametrize("failing", ["list", "post"])
def test_a_bad_token_or_a_missing_issue_is_permanent(
    http: httpx.Client, clock: ManualClock, status: int, failing: str
) -> None:
    refused = Reply(status=status, json={"message": "no"})
    with RecordingServer() as server:
        server.script([refused] if failing == "list" else [Reply(json=[]), refused])
        with pytest.raises(SendFailed) as failed:
            channel_at(server.url, http, clock).notify(approval_notification(), KEY)

    assert failed.value.retryable is False
    assert failed.value.status == status
    # nothing is posted after a failed lookup
    assert [r.method for r in server.requests] == (
        ["GET"] if failing == "list" else ["GET", "POST"]
    )


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_transient_failure_of_the_lookup_retries_rather_than_posting(
    http: httpx.Client, clock: ManualClock, status: int
) -> None:
    with RecordingServer() as server:
        server.script([Reply(status=status)])
        with pytest.raises(SendFailed) as failed:
            channel_at(server.url, http, clock).notify(approval_notification(), KEY)

    assert failed.value.retryable is True
    assert [r.method for r in server.requests] == ["GET"]


def test_a_redirect_is_not_followed(http: httpx.Client, clock: ManualClock) -> None:
    with RecordingServer() as server:
        server.script([Reply(status=301, headers={"Location": "http://169.254.169.254/"})])
        with pytest.raises(SendFailed) as failed:
            channel_at(server.url, http, clock).notify(approval_notification(), KEY)

    assert failed.value.retryable is False
    assert len(server.requests) == 1


def test_the_token_is_read_at_each_send(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    secrets = MemorySecrets({"gh": "ghs_old"})
    channel = channel_at(github.url, http, clock, token=lambda: secrets.get("gh"))

    channel.notify(approval_notification("p1"), idempotency_key("run-1", "p1", "ops-github"))
    secrets.set("gh", "ghs_new")  # an installation token rotated
    channel.notify(approval_notification("p2"), idempotency_key("run-1", "p2", "ops-github"))

    tokens = [r.headers["authorization"] for r in github.server.requests]
    assert tokens == ["Bearer ghs_old"] * 2 + ["Bearer ghs_new"] * 2


def test_a_missing_token_is_permanent(http: httpx.Client, clock: ManualClock) -> None:
    def missing() -> str:
        raise SecretMissing("gh")

    channel = GitHubChannel("ops-github", REPO, ISSUE, missing, client=http, clock=clock)

    with pytest.raises(SendFailed) as failed:
        channel.notify(approval_notification(), KEY)
    assert failed.value.retryable is False


def write_channels(tmp_path: Path, entry: str) -> Path:
    path = tmp_path / "channels.yaml"
    path.write_text(f"channels:\n  ops-github: {entry}\n")
    return path


def test_channels_yaml_builds_a_github_channel_that_posts(
    tmp_path: Path, github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    path = write_channels(
        tmp_path,
        f"{{type: github, repository: {REPO}, issue: {ISSUE}, token: {{secret: gh}}, "
        f"apiUrl: '{github.url}', allowPrivate: true}}",
    )
    channels = build_channels(
        load_channels(path, environ={}), MemorySecrets({"gh": "ghs_x"}), http=http, clock=clock
    )

    channels["ops-github"].notify(approval_notification(), KEY)

    assert github.calls() == [("GET", COMMENTS), ("POST", COMMENTS)]


@pytest.mark.parametrize(
    "entry",
    [
        "{type: github, repository: acme/payments, issue: 42, token: ghp_inline}",
        "{type: github, repository: 'not a repo', issue: 42, token: {secret: gh}}",
        "{type: github, repository: acme/payments, issue: 0, token: {secret: gh}}",
    ],
)
def test_bad_settings_are_refused_when_loaded(tmp_path: Path, entry: str) -> None:
    with pytest.raises(ConfigError):
        load_channels(write_channels(tmp_path, entry), environ={})


@pytest.mark.parametrize("api_url", ["http://ghe.example.com/api/v3", "https://10.0.0.7/api/v3"])
def test_a_private_or_plain_http_api_url_needs_allow_private(
    tmp_path: Path, http: httpx.Client, clock: ManualClock, api_url: str
) -> None:
    path = write_channels(
        tmp_path,
        f"{{type: github, repository: {REPO}, issue: {ISSUE}, token: {{secret: gh}}, "
        f"apiUrl: '{api_url}'}}",
    )
    config = load_channels(path, environ={})

    with pytest.raises(ValueError, match="allowPrivate"):
        build_channels(config, MemorySecrets({"gh": "ghs_x"}), http=http, clock=clock)


def test_an_api_host_resolving_to_a_private_address_gets_no_token(
    http: httpx.Client, clock: ManualClock
) -> None:
    with RecordingServer() as server:
        channel = GitHubChannel(
            "ops-github",
            REPO,
            ISSUE,
            "ghs_x",
            client=http,
            clock=clock,
            api_url="https://ghe.example.com/api/v3",
            resolver=lambda host, port: ["127.0.0.1"],
        )
        with pytest.raises(SendFailed) as failed:
            channel.notify(approval_notification(), KEY)

    assert failed.value.retryable is False
    assert "allowPrivate" in failed.value.reason
    assert server.requests == []


def test_requests_go_to_the_checked_address_with_the_name_as_host(clock: ManualClock) -> None:
    # A transport that records where each request would connect to
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "GET":
            return httpx.Response(200, json=[])
        return httpx.Response(201, json={"id": 7})

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        channel = GitHubChannel(
            "ops-github",
            REPO,
            ISSUE,
            "ghs_x",
            client=client,
            clock=clock,
            api_url="https://ghe.example.com/api/v3",
            resolver=lambda host, port: ["93.184.216.34"],
        )
        channel.notify(approval_notification(), KEY)

    assert [r.url.host for r in seen] == ["93.184.216.34"] * 2
    assert [r.url.path for r in seen] == [f"/api/v3{COMMENTS}"] * 2
    assert {r.headers["host"] for r in seen} == {"ghe.example.com"}
    assert {r.extensions.get("sni_hostname") for r in seen} == {"ghe.example.com"}


# A GitHub App: a JWT signed with its key, exchanged for an installation token.

APP_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
APP_PEM = APP_KEY.private_bytes(
    serialization.Encoding.PEM,
    serialization.PrivateFormat.PKCS8,
    serialization.NoEncryption(),
).decode()
EXCHANGE = "/app/installations/7890/access_tokens"


def app_channel(
    github: FakeGitHub | RecordingServer, http: httpx.Client, clock: ManualClock, key: str
) -> GitHubChannel:
    return GitHubChannel(
        "ops-github",
        REPO,
        ISSUE,
        app=GitHubApp(app_id="123456", installation_id=7890, private_key=lambda: key),
        client=http,
        clock=clock,
        api_url=github.url,
        allow_private=True,
    )


def installation_token(token: str, expires_at: str = "2026-01-01T01:00:00Z") -> Reply:
    return Reply(status=201, json={"token": token, "expires_at": expires_at})


def unb64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def test_an_app_exchanges_a_signed_jwt_once_for_the_installation_token(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    github.server.script([installation_token("ghs_inst1")], path=EXCHANGE)
    channel = app_channel(github, http, clock, APP_PEM)

    channel.notify(approval_notification("p1"), idempotency_key("run-1", "p1", "ops-github"))
    channel.notify(approval_notification("p2"), idempotency_key("run-1", "p2", "ops-github"))

    exchange, *rest = github.server.requests
    assert (exchange.method, exchange.path) == ("POST", EXCHANGE)
    assert exchange.headers["accept"] == "application/vnd.github+json"
    jwt = exchange.headers["authorization"].removeprefix("Bearer ")
    header, claims, signature = jwt.split(".")
    APP_KEY.public_key().verify(
        unb64(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    now = int(clock.now().timestamp())
    assert json.loads(unb64(header)) == {"alg": "RS256", "typ": "JWT"}
    assert json.loads(unb64(claims)) == {"iat": now - 60, "exp": now + 540, "iss": "123456"}
    # both sends use the one token: no second exchange within its hour
    assert [r.path for r in rest] == [COMMENTS] * 4
    assert {r.headers["authorization"] for r in rest} == {"Bearer ghs_inst1"}


def test_an_installation_token_near_its_expiry_is_exchanged_again(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    github.server.script(
        [installation_token("ghs_inst1"), installation_token("ghs_inst2", "2026-01-01T02:00:00Z")],
        path=EXCHANGE,
    )
    channel = app_channel(github, http, clock, APP_PEM)
    channel.notify(approval_notification("p1"), idempotency_key("run-1", "p1", "ops-github"))

    clock.advance(3600 - 240)  # four minutes left: too few to start a send with
    channel.notify(approval_notification("p2"), idempotency_key("run-1", "p2", "ops-github"))

    assert [r.path for r in github.server.requests].count(EXCHANGE) == 2
    assert github.server.requests[-1].headers["authorization"] == "Bearer ghs_inst2"


def test_a_refused_installation_token_is_retried_with_a_new_one(
    http: httpx.Client, clock: ManualClock
) -> None:
    with RecordingServer() as server:
        server.script(
            [installation_token("ghs_revoked"), installation_token("ghs_fresh")], path=EXCHANGE
        )
        server.script(
            [Reply(status=401, json={"message": "Bad credentials"}), Reply(json=[])], path=COMMENTS
        )
        channel = app_channel(server, http, clock, APP_PEM)

        with pytest.raises(SendFailed) as failed:
            channel.notify(approval_notification(), KEY)
        assert failed.value.retryable is True
        server.script([Reply(status=201, json={"id": 5})], path=COMMENTS)
        channel.notify(approval_notification(), KEY)

    assert [r.path for r in server.requests] == [EXCHANGE, COMMENTS, EXCHANGE, COMMENTS, COMMENTS]
    assert server.requests[-1].headers["authorization"] == "Bearer ghs_fresh"


@pytest.mark.parametrize("status", [401, 404])
def test_an_app_refused_by_github_is_permanent(
    http: httpx.Client, clock: ManualClock, status: int
) -> None:
    with RecordingServer() as server:
        server.script([Reply(status=status, json={"message": "no"})], path=EXCHANGE)
        channel = app_channel(server, http, clock, APP_PEM)
        with pytest.raises(SendFailed) as failed:
            channel.notify(approval_notification(), KEY)

    assert failed.value.retryable is False
    assert [r.path for r in server.requests] == [EXCHANGE]


def test_an_unusable_app_key_is_permanent_and_not_quoted(
    github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    channel = app_channel(github, http, clock, "-----BEGIN PRIVATE KEY-----\nsecretbits\n")

    with pytest.raises(SendFailed) as failed:
        channel.notify(approval_notification(), KEY)

    assert failed.value.retryable is False
    assert "secretbits" not in failed.value.reason
    assert github.server.requests == []


def test_channels_yaml_builds_an_app_channel(
    tmp_path: Path, github: FakeGitHub, http: httpx.Client, clock: ManualClock
) -> None:
    path = write_channels(
        tmp_path,
        f"{{type: github, repository: {REPO}, issue: {ISSUE}, apiUrl: '{github.url}', "
        "allowPrivate: true, app: {appId: '123456', installationId: 7890, "
        "privateKey: {secret: gh-app}}}",
    )
    github.server.script([installation_token("ghs_inst1")], path=EXCHANGE)
    channels = build_channels(
        load_channels(path, environ={}), MemorySecrets({"gh-app": APP_PEM}), http=http, clock=clock
    )

    channels["ops-github"].notify(approval_notification(), KEY)

    assert [r.path for r in github.server.requests] == [EXCHANGE, COMMENTS, COMMENTS]


@pytest.mark.parametrize(
    "credentials",
    [
        "",
        "token: {secret: gh}, app: {appId: '1', installationId: 2, privateKey: {secret: k}}",
        "app: {appId: '1', installationId: 2, privateKey: inline-pem}",
    ],
)
def test_a_channel_has_exactly_one_credential(tmp_path: Path, credentials: str) -> None:
    entry = f"{{type: github, repository: {REPO}, issue: {ISSUE}, {credentials}}}"
    with pytest.raises(ConfigError):
        load_channels(write_channels(tmp_path, entry.replace(", }", "}")), environ={})


def test_a_deployment_reads_the_app_key_and_the_token_from_secrets_manager(
    tmp_path: Path,
) -> None:
    path = tmp_path / "channels.yaml"
    path.write_text(
        "channels:\n"
        f"  a: {{type: github, repository: {REPO}, issue: 1, token: {{secret: gh-token}}}}\n"
        f"  b: {{type: github, repository: {REPO}, issue: 2, "
        "app: {appId: '1', installationId: 2, privateKey: {secret: gh-app-key}}}\n"
    )

    assert channel_secret_names(load_channels(path, environ={})) == ["gh-app-key", "gh-token"]
