"""``channels.yaml``: validation with file and field named, agents' ``notify`` checked at load."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, get_args

import httpx
import pytest

from signoff.agents import AgentCatalog, load_agent
from signoff.approver.actors import ESCALATION, EXPIRY, LINK, RESERVED_CHANNELS, RULES
from signoff.channels.addresses import address_problem
from signoff.channels.build import build_channels
from signoff.channels.config import ChannelsConfig, check_agent_notify, load_channels
from signoff.channels.email import EmailChannel
from signoff.channels.settings.database import DatabaseSettings
from signoff.channels.settings.email import EmailSettings
from signoff.channels.settings.lark import LarkSettings
from signoff.channels.settings.redis import RedisSettings
from signoff.channels.settings.slack import SlackSettings
from signoff.channels.settings.webhook import WebhookSettings
from signoff.channels.webhook import WebhookChannel
from signoff.clock import ManualClock
from signoff.errors import ConfigError
from signoff.secrets.memory import MemorySecrets
from signoff.store.records import AuditEntry

if TYPE_CHECKING:
    from collections.abc import Iterator

AGENTS = Path(__file__).resolve().parents[3] / "agents"

FULL = """\
channels:
  ops-webhook: {type: webhook, url: "https://hooks.example.com/signoff", secret: {secret: webhook-signing}, allowPrivate: false}
  support-slack: {type: slack, channelId: C0123, botToken: {secret: slack-bot-token}, signingSecret: {secret: slack-signing-secret}, approvers: [U012ABC]}
  lark-ops: {type: lark, chatId: oc_x, appId: cli_x, appSecret: {secret: lark-app-secret}, verificationToken: {secret: lark-verification-token}, baseUrl: "https://open.larksuite.com", approvers: [ou_x]}
  support-email: {type: email, to: [ops@example.com], from: signoff@example.com, approvers: [ops@example.com]}
  approvals-redis: {type: redis, url: {secret: redis-url}, queueKey: "signoff:pending-approvals"}
  approvals-db: {type: database, dsn: {secret: database-dsn}, table: pending_approvals}
"""  # noqa: E501 - the documented one-line-per-channel form


@pytest.fixture(autouse=True)
def _no_deployment_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    # The local stack sets it; these tests decide it themselves.
    monkeypatch.delenv("SIGNOFF_ALLOW_PRIVATE_WEBHOOKS", raising=False)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "channels.yaml"
    path.write_text(text)
    return path


def refused(tmp_path: Path, text: str) -> ConfigError:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_channels(path)
    assert caught.value.file == str(path)
    return caught.value


# --- loading ---------------------------------------------------------------------------


def test_every_documented_channel_type_loads(tmp_path: Path) -> None:
    config = load_channels(write(tmp_path, FULL))

    channels = config.channels
    assert isinstance(channels["ops-webhook"], WebhookSettings)
    assert channels["ops-webhook"].secret.secret == "webhook-signing"
    assert isinstance(channels["support-slack"], SlackSettings)
    assert channels["support-slack"].approvers == ["U012ABC"]
    assert isinstance(channels["lark-ops"], LarkSettings)
    assert channels["lark-ops"].app_secret.secret == "lark-app-secret"
    assert isinstance(channels["support-email"], EmailSettings)
    assert channels["support-email"].sender == "signoff@example.com"
    assert isinstance(channels["approvals-redis"], RedisSettings)
    assert channels["approvals-redis"].url.secret == "redis-url"
    assert isinstance(channels["approvals-db"], DatabaseSettings)
    assert channels["approvals-db"].table == "pending_approvals"


def test_a_missing_file_is_a_deployment_without_channels(tmp_path: Path) -> None:
    assert load_channels(tmp_path / "channels.yaml") == ChannelsConfig()
    assert load_channels(write(tmp_path, "")) == ChannelsConfig()


def test_the_sample_channels_file_loads() -> None:
    config = load_channels(AGENTS / "channels.yaml")

    hook = config.channels["local-webhook"]
    assert isinstance(hook, WebhookSettings)
    assert hook.url == "http://127.0.0.1:3000/_local/webhook"
    assert hook.allow_private is True
    assert hook.secret.secret == "local-webhook"
    mail = config.channels["local-email"]
    assert isinstance(mail, EmailSettings)
    assert (mail.sender, mail.to) == ("signoff@example.com", ["approver@example.com"])


@pytest.mark.parametrize(
    ("yaml_text", "field", "problem"),
    [
        (
            "channels:\n  w: {type: webhook, url: 'https://x.example.com', secret: whsec_abc}\n",
            "channels.w.secret",
            "secrets are referenced, never inline",
        ),
        (
            "channels:\n  s: {type: slack, channelId: C1, botToken: xoxb-123,"
            " signingSecret: {secret: s}}\n",
            "channels.s.botToken",
            "secrets are referenced, never inline",
        ),
        (
            "channels:\n  l: {type: lark, chatId: c, appId: a, appSecret: {secret: a},"
            " verificationToken: {secret: v}, encryptKey: plain}\n",
            "channels.l.encryptKey",
            "secrets are referenced, never inline",
        ),
        (
            "channels:\n  r: {type: redis, url: 'redis://:password@cache:6379/0'}\n",
            "channels.r.url",
            "secrets are referenced, never inline",
        ),
        (
            "channels:\n  d: {type: database, dsn: 'postgresql://u:p@db/x'}\n",
            "channels.d.dsn",
            "secrets are referenced, never inline",
        ),
        (
            "channels:\n  w: {type: webhook, url: 'https://u:p@x.example.com',"
            " secret: {secret: a}}\n",
            "channels.w.url",
            "never inline",
        ),
        ("channels:\n  w: {type: pager}\n", "channels.w.type", "unknown channel type 'pager'"),
        ("channels:\n  w: {url: 'https://x.example.com'}\n", "channels.w.type", "type is one of"),
        (
            "channels:\n  w: {type: webhook, url: 'https://x.example.com', secret: {secret: a},"
            " retries: 3}\n",
            "channels.w.retries",
            "Extra inputs are not permitted",
        ),
        (
            "channels:\n  w: {type: webhook, url: 'ftp://x.example.com', secret: {secret: a}}\n",
            "channels.w.url",
            "http",
        ),
        (
            "channels:\n  w: {type: webhook, url: 'https://x.example.com', secret: {name: a}}\n",
            "channels.w.secret.secret",
            "required",
        ),
        (
            "channels:\n  e: {type: email, to: [not-an-address], from: a@example.com}\n",
            "channels.e.to.0",
            "not an email address",
        ),
        (
            # an address with a colon would read as an API key's apikey:<id>@<tenant>
            "channels:\n  e: {type: email, to: ['apikey:k1@acme.com'], from: a@example.com}\n",
            "channels.e.to.0",
            "not an email address",
        ),
        ("channels:\n  e: {type: email, to: [a@example.com]}\n", "channels.e.from", "required"),
        ("channels:\n  e: {type: email, to: [], from: a@example.com}\n", "channels.e.to", "least"),
        (
            "channels:\n  d: {type: database, dsn: {secret: d}, table: 'x; DROP TABLE y'}\n",
            "channels.d.table",
            "table name",
        ),
        (
            "channels:\n  s: {type: slack, botToken: {secret: t}, signingSecret: {secret: s}}\n",
            "channels.s.channelId",
            "required",
        ),
        ("channels:\n  'a:b': {type: redis, url: {secret: r}}\n", "channels.a:b", "no colon"),
        ("channels: [a, b]\n", "channels", "dictionary"),
        ("webhooks: {}\n", "webhooks", "Extra inputs"),
    ],
)
def test_each_error_names_the_file_and_the_field(
    tmp_path: Path, yaml_text: str, field: str, problem: str
) -> None:
    error = refused(tmp_path, yaml_text)

    assert error.field == field
    assert problem in error.problem
    assert str(error).startswith(f"{error.file}: {field}: ")


@pytest.mark.parametrize("name", sorted(RESERVED_CHANNELS))
def test_a_channel_named_like_the_systems_own_actors_is_refused_with_its_line(
    tmp_path: Path, name: str
) -> None:
    # "escalation" is the natural name of the channel a ladder notifies: a person's
    # decision through it must never read as the sweeper's, nor skip the item's policy
    error = refused(
        tmp_path,
        "# the ladder's channel\n"
        "channels:\n"
        "  ops-mail: {type: email, to: [bob@example.com], from: signoff@example.com}\n"
        f"  {name}:\n"
        "    type: email\n"
        "    to: [eve@example.com, bob@example.com]\n"
        "    from: signoff@example.com\n",
    )

    assert error.field == f"channels.{name}"
    assert error.problem.startswith(f"{name!r} is reserved: the audit records")
    assert error.problem.endswith("rename the channel (line 4, column 3)")
    assert str(error).startswith(f"{error.file}: channels.{name}: ")


def test_the_reserved_names_hold_every_word_the_audit_writes_by_itself() -> None:
    kinds = get_args(AuditEntry.model_fields["kind"].annotation)
    assert set(kinds) <= RESERVED_CHANNELS
    system = {EXPIRY.channel, ESCALATION.channel, EXPIRY.id, LINK.channel, LINK.id, RULES}
    assert system | {"api", "inbox", "cli"} <= RESERVED_CHANNELS


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    error = refused(tmp_path, "channels: {w: [unclosed\n")

    assert "invalid YAML" in error.problem


def test_an_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "channels.yaml").mkdir()

    with pytest.raises(ConfigError) as caught:
        load_channels(tmp_path / "channels.yaml")

    assert "cannot be read" in caught.value.problem


# --- private webhook targets at load --------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://192.168.0.10:8443/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[fe80::1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://0.0.0.0/hook",
        "https://localhost/hook",
        "https://api.localhost/hook",
    ],
)
def test_a_private_webhook_target_is_refused_at_load(tmp_path: Path, url: str) -> None:
    error = refused(
        tmp_path, f"channels:\n  w: {{type: webhook, url: '{url}', secret: {{secret: a}}}}\n"
    )

    assert error.field == "channels.w.url"
    assert "allowPrivate: true" in error.problem


def test_plain_http_is_refused_for_a_public_target(tmp_path: Path) -> None:
    error = refused(
        tmp_path,
        "channels:\n  w: {type: webhook, url: 'http://hooks.example.com/x', secret: {secret: a}}\n",
    )

    assert "https" in error.problem


def test_allow_private_lets_a_loopback_target_load(tmp_path: Path) -> None:
    text = (
        "channels:\n  w: {type: webhook, url: 'http://127.0.0.1:3000/h', secret: {secret: a},"
        " allowPrivate: true}\n"
    )

    assert load_channels(write(tmp_path, text)).names() == ["w"]


def test_the_deployment_variable_allows_every_private_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(
        tmp_path, "channels:\n  w: {type: webhook, url: 'http://10.0.0.5/h', secret: {secret: a}}\n"
    )
    with pytest.raises(ConfigError):
        load_channels(path)

    monkeypatch.setenv("SIGNOFF_ALLOW_PRIVATE_WEBHOOKS", "true")

    assert load_channels(path).names() == ["w"]
    with pytest.raises(ConfigError):
        load_channels(path, environ={})  # an explicit environment wins over the process's


def test_a_public_hostname_is_left_to_the_send_time_check(tmp_path: Path) -> None:
    text = (
        "channels:\n  w: {type: webhook, url: 'https://hooks.example.com/x', secret: {secret: a}}\n"
    )

    assert load_channels(write(tmp_path, text)).names() == ["w"]


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("10.0.0.1", "private"),
        ("fd12::1", "private"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("100.64.0.1", "non-public"),
        ("::ffff:127.0.0.1", "loopback"),
        ("2002:7f00:1::", "loopback"),  # 6to4 around 127.0.0.1
        ("64:ff9b::a00:1", "private"),  # NAT64 around 10.0.0.1
    ],
)
def test_address_problem_names_the_kind(address: str, kind: str) -> None:
    problem = address_problem(address)

    assert problem is not None and kind in problem


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:4700::6810:85e5", "8.8.8.8"])
def test_public_addresses_are_fine(address: str) -> None:
    assert address_problem(address) is None


# --- agents' notify ------------------------------------------------------------------------


def channels(tmp_path: Path) -> ChannelsConfig:
    return load_channels(write(tmp_path, FULL))


def test_notify_naming_defined_channels_passes(tmp_path: Path) -> None:
    check_agent_notify(
        "agent.yaml",
        {"ops-webhook": ["approval", "question", "run_finish"], "approvals-db": ["approval"]},
        channels(tmp_path),
    )


def test_an_undefined_channel_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        check_agent_notify("agents/x/agent.yaml", {"pager": ["approval"]}, channels(tmp_path))

    assert caught.value.file == "agents/x/agent.yaml"
    assert caught.value.field == "notify.pager"
    assert "no channel named 'pager' in channels.yaml" in caught.value.problem
    assert "approvals-db, approvals-redis, lark-ops" in caught.value.problem


@pytest.mark.parametrize("channel", ["approvals-db", "approvals-redis"])
@pytest.mark.parametrize("event", ["question", "run_start", "run_finish", "stuck"])
def test_approval_only_channels_refuse_other_events(
    tmp_path: Path, channel: str, event: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        check_agent_notify("agent.yaml", {channel: ["approval", event]}, channels(tmp_path))

    assert caught.value.field == f"notify.{channel}"
    assert f"only takes the 'approval' event, not {event}" in caught.value.problem


def test_an_empty_event_list_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        check_agent_notify("agent.yaml", {"ops-webhook": []}, channels(tmp_path))

    assert caught.value.field == "notify.ops-webhook"


def agents_root(tmp_path: Path, notify: str, channels_yaml: str | None = FULL) -> Path:
    root = tmp_path / "agents"
    (root / "helper").mkdir(parents=True)
    (root / "helper" / "agent.yaml").write_text(f"system: You help.\nnotify: {notify}\n")
    if channels_yaml is not None:
        (root / "channels.yaml").write_text(channels_yaml)
    return root


def test_the_catalog_refuses_an_agent_naming_an_undefined_channel(tmp_path: Path) -> None:
    root = agents_root(tmp_path, "{pager: [approval]}")

    with pytest.raises(ConfigError) as caught:
        AgentCatalog(root).get("helper")

    assert caught.value.file == str(root / "helper" / "agent.yaml")
    assert caught.value.field == "notify.pager"


def test_the_catalog_refuses_a_question_on_a_database_channel(tmp_path: Path) -> None:
    root = agents_root(tmp_path, "{approvals-db: [approval, question]}")

    with pytest.raises(ConfigError) as caught:
        AgentCatalog(root).get("helper")

    assert caught.value.field == "notify.approvals-db"


def test_without_channels_yaml_any_notify_is_refused(tmp_path: Path) -> None:
    root = agents_root(tmp_path, "{ops-webhook: [approval]}", channels_yaml=None)

    with pytest.raises(ConfigError) as caught:
        AgentCatalog(root).get("helper")

    assert "channels: none defined" in caught.value.problem


def test_the_catalog_loads_channels_once_and_exposes_them(tmp_path: Path) -> None:
    root = agents_root(tmp_path, "{ops-webhook: [approval], support-email: [question]}")
    catalog = AgentCatalog(root)

    agent = catalog.get("helper")

    assert agent.config.notify == {"ops-webhook": ["approval"], "support-email": ["question"]}
    assert catalog.channels is catalog.channels
    assert "ops-webhook" in catalog.channels.names()


def test_a_broken_channels_yaml_fails_the_catalog(tmp_path: Path) -> None:
    root = agents_root(tmp_path, "{}", channels_yaml="channels:\n  w: {type: pager}\n")

    with pytest.raises(ConfigError) as caught:
        AgentCatalog(root).get("helper")

    assert caught.value.file == str(root / "channels.yaml")


def test_load_agent_alone_checks_notify_only_when_given_channels(tmp_path: Path) -> None:
    root = agents_root(tmp_path, "{pager: [approval]}")

    assert load_agent(root / "helper").config.notify == {"pager": ["approval"]}
    with pytest.raises(ConfigError):
        load_agent(root / "helper", channels=channels(tmp_path))


def test_the_sample_agents_notify_the_local_webhook_and_mailbox() -> None:
    catalog = AgentCatalog(AGENTS)

    agent = catalog.get("customer-service")

    assert agent.config.notify == {
        "local-webhook": ["approval", "question"],
        "local-email": ["approval", "question"],
    }
    assert catalog.get("daily-digest").config.notify == {}


# --- building channels -----------------------------------------------------------------------


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


def test_build_channels_makes_webhook_and_email_channels_named_as_configured(
    tmp_path: Path, http: httpx.Client
) -> None:
    text = (
        "channels:\n"
        "  ops-webhook: {type: webhook, url: 'https://hooks.example.com/x',"
        " secret: {secret: webhook-signing}}\n"
        "  support-email: {type: email, to: [ops@example.com], from: signoff@example.com}\n"
    )
    config = load_channels(write(tmp_path, text))

    # No secret needed to build: the webhook reads it when it sends, SES is built lazily
    built = build_channels(config, MemorySecrets(), http=http, clock=ManualClock())

    assert set(built) == {"ops-webhook", "support-email"}
    assert isinstance(built["ops-webhook"], WebhookChannel)
    assert built["ops-webhook"].name == "ops-webhook"
    assert built["ops-webhook"].allow_private is False
    assert isinstance(built["support-email"], EmailChannel)
    assert built["support-email"].name == "support-email"


def test_build_channels_builds_slack_and_lark_by_type(tmp_path: Path, http: httpx.Client) -> None:
    config = load_channels(write(tmp_path, FULL))
    only = ChannelsConfig(
        channels={k: v for k, v in config.channels.items() if k in ("support-slack", "lark-ops")}
    )
    secrets = MemorySecrets(
        {
            "slack-bot-token": "xoxb-test",
            "slack-signing-secret": "slack-signing",
            "lark-app-secret": "lark-secret",
            "lark-verification-token": "lark-verify",
        }
    )

    built = build_channels(only, secrets, http=http, clock=ManualClock())

    assert {name: type(channel).__name__ for name, channel in built.items()} == {
        "support-slack": "SlackChannel",
        "lark-ops": "LarkChannel",
    }
    assert all(channel.name == name for name, channel in built.items())


def test_an_empty_config_builds_nothing_and_no_client() -> None:
    assert build_channels(ChannelsConfig(), MemorySecrets(), clock=ManualClock()) == {}
