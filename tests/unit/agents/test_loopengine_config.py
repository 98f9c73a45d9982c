"""loopengine's ``AgentConfig`` keys in ``agent.yaml`` (issue 13, "agent config understood").

``systemPrompt``, ``maxTurns``, ``name``, the inline ``rules`` + ``defaultDecision``
and ``httpNotifier`` (the seed's ``{channel, config, events}`` with its key names)
load as signoff's own settings; the TypeScript-only keys are refused naming their
Python home; every problem names the agent's file and the field.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from signoff.agents import AgentCatalog, load_agent
from signoff.agents.config import PYTHON_HOMES
from signoff.agents.describe import describe_agent
from signoff.channels.config import SecretRef
from signoff.channels.http_notifier import deployment_channels
from signoff.channels.settings.database import DatabaseSettings
from signoff.channels.settings.email import EmailSettings
from signoff.channels.settings.lark import LarkSettings
from signoff.channels.settings.redis import RedisSettings
from signoff.channels.settings.slack import SlackSettings
from signoff.channels.settings.webhook import WebhookSettings
from signoff.errors import ConfigError
from signoff.gate import Scope, decide
from tests.support.loopengine import SAMPLE, loopengine_agent

if TYPE_CHECKING:
    from pathlib import Path

HOOK = {"webhookUrl": "https://hooks.example.com/loop", "webhookSecret": {"secret": "loop-hook"}}


def problem(folder: Path) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_agent(folder)
    assert caught.value.file == str(folder / "agent.yaml")
    return caught.value


def test_loopengine_keys_load_as_signoffs_own(tmp_path: Path) -> None:
    agent = load_agent(loopengine_agent(tmp_path))

    assert agent.config.system.startswith("You are the customer-service agent")
    assert agent.system_prompt.startswith("You are the customer-service agent")
    assert agent.config.max_turns == 8
    assert agent.tools.keys() >= {"lookup_order", "issue_refund"}


def test_inline_rules_are_the_actauth_files_rules(tmp_path: Path) -> None:
    inline = load_agent(loopengine_agent(tmp_path)).rules
    from_file = load_agent(SAMPLE).rules

    assert inline == from_file  # same rules, same order, scopes bound to the agent alike
    refund = {"orderId": "A-1001", "amount": 500}
    prod = Scope(tenant="default", environment="production", agent="customer-service")
    decided = decide(inline, "issue_refund", refund, prod)
    assert decided.decision == "ask"
    assert "refund-production-needs-approval" in decided.reason
    assert decide(inline, "delete_account", {}, prod).decision == "deny"  # defaultDecision


def test_default_decision_alone_is_the_inline_forms_default(tmp_path: Path) -> None:
    folder = loopengine_agent(tmp_path, defaultDecision="allow")
    config = yaml.safe_load((folder / "agent.yaml").read_text(encoding="utf-8"))
    del config["rules"]
    (folder / "agent.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    agent = load_agent(folder)
    assert agent.rules.rules == () and agent.rules.default_decision == "allow"
    assert describe_agent(agent)["rules"]["source"] == f"{agent.name}/agent.yaml"


def test_an_inline_rule_error_names_agent_yaml_the_rule_and_the_field(tmp_path: Path) -> None:
    folder = loopengine_agent(
        tmp_path, rules=[{"name": "refunds", "scope": "*/*", "tool": "issue_refund"}]
    )
    error = problem(folder)
    assert error.field == "rules[0] 'refunds'.decision"
    assert error.problem == "required"


def test_inline_rules_beside_an_actauth_file_are_refused(tmp_path: Path) -> None:
    folder = loopengine_agent(tmp_path)
    shutil.copy(SAMPLE / "actauth.yml", folder / "actauth.yml")

    error = problem(folder)
    assert error.field == "rules"
    assert "actauth.yml both present" in error.problem


def test_default_decision_beside_an_actauth_file_is_refused(tmp_path: Path) -> None:
    folder = loopengine_agent(tmp_path)
    config = yaml.safe_load((folder / "agent.yaml").read_text(encoding="utf-8"))
    del config["rules"]
    (folder / "agent.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    shutil.copy(SAMPLE / "actauth.yml", folder / "actauth.yml")

    error = problem(folder)
    assert error.field == "defaultDecision"
    assert "default_decision" in error.problem


def test_system_and_system_prompt_together_are_refused(tmp_path: Path) -> None:
    error = problem(loopengine_agent(tmp_path, system="Another prompt."))
    assert error.field == "systemPrompt"
    assert "write one" in error.problem


def test_a_model_api_key_written_inline_is_refused_naming_api_key_env(tmp_path: Path) -> None:
    model = {"provider": "openai", "model": "gpt-4o-mini", "apiKey": "sk-live-123"}
    error = problem(loopengine_agent(tmp_path, model=model))
    assert error.field == "model.apiKey"
    assert "apiKeyEnv" in error.problem and "sk-live-123" not in str(error)


def test_a_name_other_than_the_folders_is_refused(tmp_path: Path) -> None:
    error = problem(loopengine_agent(tmp_path, name="support"))
    assert error.field == "name"
    assert "'customer-service'" in error.problem


@pytest.mark.parametrize("key", sorted(PYTHON_HOMES))
def test_typescript_only_keys_point_to_their_python_home(tmp_path: Path, key: str) -> None:
    error = problem(loopengine_agent(tmp_path, **{key: "(ctx) => log(ctx)"}))

    assert error.field == key
    assert "TypeScript" in error.problem


@pytest.mark.parametrize(
    ("key", "home"),
    [
        ("onRunStart", "on_run_start(ctx) in hooks.py"),
        ("onRunFinish", "on_run_finish(ctx) in hooks.py"),
        ("tenantFor", "tenant_for(headers) in hooks.py"),
        ("sessionIdFor", "session_id_for(body) in hooks.py"),
        ("tools", "@tool in tools.py"),
    ],
)
def test_hooks_and_tools_are_pointed_to_the_python_files(
    tmp_path: Path, key: str, home: str
) -> None:
    assert home in problem(loopengine_agent(tmp_path, **{key: []})).problem


def notifier(channel: str, config: dict[str, Any], events: list[str] | None = None) -> Any:
    return {"channel": channel, "config": config, "events": events or ["approval"]}


def test_http_notifier_webhook_becomes_a_channel_in_notify(tmp_path: Path) -> None:
    root = tmp_path / "agents"
    loopengine_agent(root, httpNotifier=notifier("webhook", HOOK, ["approval", "run_finish"]))
    catalog = AgentCatalog(root)

    agent = catalog.get("customer-service")
    assert agent.config.notify == {"httpNotifier-customer-service": ["approval", "run_finish"]}
    channel = catalog.channels.settings("httpNotifier-customer-service")
    assert channel == WebhookSettings(
        type="webhook", url=HOOK["webhookUrl"], secret=SecretRef(secret="loop-hook")
    )
    # the notifier function reads the same channels without loading the agents
    assert deployment_channels(root) == catalog.channels


@pytest.mark.parametrize(
    ("channel", "config", "expected"),
    [
        (
            "slack",
            {
                "botToken": {"secret": "bot"},
                "channelId": "C123",
                "signingSecret": {"secret": "slack-signing"},
            },
            SlackSettings(
                type="slack",
                channel_id="C123",
                bot_token=SecretRef(secret="bot"),
                signing_secret=SecretRef(secret="slack-signing"),
            ),
        ),
        (
            "lark",
            {
                "appId": "cli_1",
                "appSecret": {"secret": "lark-app"},
                "chatId": "oc_1",
                "verificationToken": {"secret": "lark-verify"},
            },
            LarkSettings(
                type="lark",
                chat_id="oc_1",
                app_id="cli_1",
                app_secret=SecretRef(secret="lark-app"),
                verification_token=SecretRef(secret="lark-verify"),
            ),
        ),
        (
            "email",
            {"to": "ops@example.com", "from": "signoff@example.com"},
            EmailSettings.model_validate(
                {"type": "email", "to": ["ops@example.com"], "from": "signoff@example.com"}
            ),
        ),
        (
            "database",
            {"dsn": {"secret": "db"}},
            DatabaseSettings(type="database", dsn=SecretRef(secret="db")),
        ),
        (
            "redis",
            {"url": {"secret": "redis"}, "queueKey": "approvals"},
            RedisSettings(type="redis", url=SecretRef(secret="redis"), queue_key="approvals"),
        ),
    ],
)
def test_http_notifier_channels_with_the_seeds_key_names(
    tmp_path: Path, channel: str, config: dict[str, Any], expected: Any
) -> None:
    root = tmp_path / "agents"
    loopengine_agent(root, httpNotifier=notifier(channel, config))
    catalog = AgentCatalog(root)

    assert catalog.problems() == {}
    assert catalog.channels.settings("httpNotifier-customer-service") == expected
    assert catalog.get("customer-service").config.notify == {
        "httpNotifier-customer-service": ["approval"]
    }


@pytest.mark.parametrize(
    ("http_notifier", "field", "says"),
    [
        (
            notifier("webhook", {**HOOK, "webhookSecret": "s3cret"}),
            "httpNotifier.config.webhookSecret",
            "secrets are referenced, never inline",
        ),
        (
            notifier("webhook", {"webhookSecret": {"secret": "h"}}),
            "httpNotifier.config.webhookUrl",
            "Field required",
        ),
        (
            notifier("webhook", {**HOOK, "webhookUrl": "ftp://x"}),
            "httpNotifier.config.webhookUrl",
            "http",
        ),
        (
            notifier("webhook", {**HOOK, "webhookUrl": "http://169.254.169.254/latest"}),
            "httpNotifier.config.webhookUrl",
            "link-local",
        ),
        (
            notifier("slack", {"botToken": {"secret": "b"}, "channelId": "C1"}),
            "httpNotifier.config.signingSecret",
            "Field required",
        ),
        (
            notifier("email", {"to": "ops@example.com", "sendEmail": "fn", "from": "a@b.co"}),
            "httpNotifier.config.sendEmail",
            "Amazon SES",
        ),
        (
            notifier("email", {"to": "ops@example.com", "resolveBaseUrl": "https://x"}),
            "httpNotifier.config.resolveBaseUrl",
            "SIGNOFF_PUBLIC_URL",
        ),
        (
            notifier("database", {"repository": "db"}),
            "httpNotifier.config.repository",
            "dsn: {secret: <name>}",
        ),
        (
            notifier("redis", {"redis": "client"}),
            "httpNotifier.config.redis",
            "url: {secret: <name>}",
        ),
        (
            notifier("database", {"dsn": {"secret": "db"}}, ["approval", "question"]),
            "httpNotifier.events",
            "only takes the 'approval' event",
        ),
        (notifier("teams", {}), "httpNotifier.channel", "Input should be"),
        ({"channel": "webhook", "config": HOOK, "events": []}, "httpNotifier.events", "at least"),
        (
            {**notifier("webhook", HOOK), "events": ["approval", "stuck"]},
            "httpNotifier.events.1",
            "Input should be",
        ),
    ],
)
def test_http_notifier_problems_name_the_seeds_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, http_notifier: Any, field: str, says: str
) -> None:
    monkeypatch.delenv("SIGNOFF_ALLOW_PRIVATE_WEBHOOKS", raising=False)
    root = tmp_path / "agents"
    loopengine_agent(root, httpNotifier=http_notifier)
    catalog = AgentCatalog(root)

    found = catalog.problems()  # what a cold start and `signoff check` report
    assert list(found) == ["customer-service"]
    assert found["customer-service"].file == str(root / "customer-service" / "agent.yaml")
    assert found["customer-service"].field == field
    assert says in found["customer-service"].problem
    # the broken agent's channel is left out; the deployment's channels still load
    assert "httpNotifier-customer-service" not in catalog.channels.names()


def test_notify_naming_the_http_notifier_channel_again_is_refused(tmp_path: Path) -> None:
    error = problem(
        loopengine_agent(
            tmp_path,
            httpNotifier=notifier("webhook", HOOK),
            notify={"httpNotifier-customer-service": ["approval"]},
        )
    )
    assert error.field == "notify.httpNotifier-customer-service"


def test_a_channels_yaml_entry_named_like_an_http_notifier_channel_is_refused(
    tmp_path: Path,
) -> None:
    root = tmp_path / "agents"
    loopengine_agent(root, httpNotifier=notifier("webhook", HOOK))
    (root / "channels.yaml").write_text(
        "channels:\n  httpNotifier-customer-service: {type: console}\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError) as caught:
        deployment_channels(root)
    assert caught.value.field == "channels.httpNotifier-customer-service"
    assert "httpNotifier" in caught.value.problem
