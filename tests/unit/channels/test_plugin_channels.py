"""Notifiers you write or install (issue 12): ``type: python``, the ``signoff.channels``
entry point group, the built-in console channel and ``notify: <name>``.

A plug-in is loaded through the public path a deployment uses: ``channels.yaml``
validated by ``load_channels``, channels built by ``ChannelSet``, and then run
through the conformance checks of ``signoff.testing``, as a third-party author would.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from signoff.agents.config import NOTIFY_EVENTS, AgentConfig
from signoff.agents.loader import AgentCatalog
from signoff.channels.build import BuildContext, ChannelSet
from signoff.channels.config import ChannelsConfig, check_agent_notify, load_channels
from signoff.channels.registry import CHANNEL_TYPES
from signoff.clock import ManualClock
from signoff.errors import ConfigError, SendFailed
from signoff.secrets.memory import MemorySecrets
from signoff.testing import check_channel, sample_approval
from tests.support.distributions import install
from tests.support.plugin_channel import INBOXES, Inbox

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from signoff.channels.base import Channel

PLUGIN = "tests.support.plugin_channel"


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    # An installed type joins CHANNEL_TYPES when first configured; each test starts clean.
    before = dict(CHANNEL_TYPES)
    INBOXES.clear()
    yield
    CHANNEL_TYPES.clear()
    CHANNEL_TYPES.update(before)
    INBOXES.clear()


def channels_yaml(tmp_path: Path, channels: dict[str, object]) -> Path:
    path = tmp_path / "channels.yaml"
    path.write_text(json.dumps({"channels": channels}))  # JSON is YAML
    return path


def channel_set(config: ChannelsConfig) -> ChannelSet:
    return ChannelSet(config, BuildContext(secrets=MemorySecrets(), clock=ManualClock()))


class InboxHarness:
    """The plug-in channel, built as deployed, and its inbox (which dedupes by key)."""

    dedupes_unrecorded = True

    def __init__(self, channels: ChannelSet, name: str, inbox: str) -> None:
        INBOXES.pop(inbox, None)  # a fresh service per check
        self.channel: Channel = channels[name]
        self.inbox: Inbox = INBOXES[inbox]
        channels._built.pop(name)  # the next check builds (and gets) a fresh inbox

    def fail_next(self, times: int, *, retryable: bool) -> None:
        self.inbox.failures += [retryable] * times

    def delivered(self) -> list[str]:
        return list(self.inbox.keys)

    def carried(self, key: str) -> str:
        return key


# --- type: python -------------------------------------------------------------------


def test_a_python_channel_is_built_from_its_class_and_options(tmp_path: Path) -> None:
    path = channels_yaml(
        tmp_path,
        {
            "team-inbox": {
                "type": "python",
                "class": f"{PLUGIN}:InboxChannel",
                "options": {"inbox": "ops", "prefix": "[ops] "},
            }
        },
    )
    channels = channel_set(load_channels(path))

    channels["team-inbox"].notify(sample_approval(), "run-1:p1:inbox")

    assert INBOXES["ops"].keys == ["run-1:p1:inbox"]
    assert INBOXES["ops"].titles == ["[ops] Approve issue_refund?"]  # its options reached it


def test_a_python_channel_passes_the_conformance_suite(tmp_path: Path) -> None:
    path = channels_yaml(
        tmp_path,
        {
            "team-inbox": {
                "type": "python",
                "class": f"{PLUGIN}:InboxChannel",
                "options": {"inbox": "c"},
            }
        },
    )
    channels = channel_set(load_channels(path))

    check_channel(lambda: InboxHarness(channels, "team-inbox", "c"))


@pytest.mark.parametrize(
    ("entry", "field", "problem"),
    [
        ({"class": "no_such_package.mod:Channel"}, "channels.mine.class", "cannot be imported"),
        ({"class": f"{PLUGIN}:Missing"}, "channels.mine.class", "names nothing"),
        ({"class": f"{PLUGIN}:NotAChannel"}, "channels.mine.class", "has no notify"),
        ({"class": "no colon here"}, "channels.mine.class", "package.module:Attr"),
        (
            {"class": f"{PLUGIN}:InboxChannel", "options": {"inbox": ""}},
            "channels.mine.options.inbox",
            "at least 1 character",
        ),
        (
            {"class": f"{PLUGIN}:InboxChannel", "options": {"inbox": "x", "colour": "red"}},
            "channels.mine.options.colour",
            "Extra inputs",
        ),
    ],
)
def test_a_bad_plugin_is_refused_when_channels_yaml_loads(
    tmp_path: Path, entry: dict[str, object], field: str, problem: str
) -> None:
    path = channels_yaml(tmp_path, {"mine": {"type": "python", **entry}})

    with pytest.raises(ConfigError) as refused:
        load_channels(path)

    assert refused.value.file == str(path)
    assert refused.value.field == field
    assert problem in refused.value.problem


def test_a_plugin_failing_when_built_fails_only_its_own_channel(tmp_path: Path) -> None:
    path = channels_yaml(
        tmp_path,
        {
            "broken": {"type": "python", "class": f"{PLUGIN}:BrokenAtBuild"},
            "team-inbox": {
                "type": "python",
                "class": f"{PLUGIN}:InboxChannel",
                "options": {"inbox": "o"},
            },
        },
    )
    channels = channel_set(load_channels(path))

    with pytest.raises(SendFailed) as failed:
        channels["broken"]
    channels["team-inbox"].notify(sample_approval(), "run-1:p1:inbox")

    assert failed.value.retryable is False
    assert "the inbox server is not configured" in failed.value.reason
    assert INBOXES["o"].keys == ["run-1:p1:inbox"]


# --- installed: the signoff.channels entry point group -------------------------------


def test_an_installed_channel_type_is_found_by_its_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a distribution declaring the channel type "inbox"
    install(tmp_path, monkeypatch, f"[signoff.channels]\ninbox = {PLUGIN}:InboxChannel\n")
    assert "inbox" not in CHANNEL_TYPES
    path = channels_yaml(tmp_path, {"team": {"type": "inbox", "options": {"inbox": "ep"}}})

    # When channels.yaml names the type, it joins the one registry and builds
    config = load_channels(path)
    channels = channel_set(config)

    assert CHANNEL_TYPES["inbox"].plugin == f"{PLUGIN}:InboxChannel"
    check_channel(lambda: InboxHarness(channels, "team", "ep"))


def test_an_installed_type_with_bad_options_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, f"[signoff.channels]\ninbox = {PLUGIN}:InboxChannel\n")
    path = channels_yaml(tmp_path, {"team": {"type": "inbox", "options": {}}})

    with pytest.raises(ConfigError) as refused:
        load_channels(path)

    assert refused.value.field == "channels.team.options.inbox"


def test_an_unknown_type_names_the_registered_ones_and_plugins(tmp_path: Path) -> None:
    path = channels_yaml(tmp_path, {"team": {"type": "carrier-pigeon"}})

    with pytest.raises(ConfigError) as refused:
        load_channels(path)

    assert refused.value.field == "channels.team.type"
    assert "console" in refused.value.problem
    assert "signoff.channels" in refused.value.problem


# --- console and notify: <name> -------------------------------------------------------


def test_the_console_channel_prints_one_line_with_the_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    channel = channel_set(ChannelsConfig())["console"]  # implicit: no channels.yaml entry
    assert type(channel).__name__ == "ConsoleChannel"

    channel.notify(sample_approval().model_copy(update={"title": "two\nlines"}), "run-1:p1:c")

    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    assert out[0].startswith("[approval] customer-service run-1: two lines (run-1:p1:c)")


def test_the_console_channel_shows_the_link_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    note = sample_approval(token="tok-secret")
    # by default no resume token reaches the line (deployed, stdout is a log)
    channel_set(ChannelsConfig())["console"].notify(note, "run-1:p1:console")
    out = capsys.readouterr().out
    assert "run-1:p1:console" in out
    assert "tok-secret" not in out
    path = channels_yaml(tmp_path, {"console": {"type": "console", "links": True}})
    channel_set(load_channels(path))["console"].notify(note, "run-1:p1:console")
    assert note.link_url in capsys.readouterr().out


def test_the_console_channel_can_log_instead(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = channels_yaml(tmp_path, {"console": {"type": "console", "output": "log"}})
    channel = channel_set(load_channels(path))["console"]

    with caplog.at_level(logging.INFO, logger="signoff.console"):
        channel.notify(sample_approval(), "run-1:p1:console")

    assert [r.idempotency_key for r in caplog.records] == ["run-1:p1:console"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("notify", "expected"),
    [
        ("console", {"console": list(NOTIFY_EVENTS)}),
        (["console", "ops"], {"console": list(NOTIFY_EVENTS), "ops": list(NOTIFY_EVENTS)}),
        ({"ops": ["approval"]}, {"ops": ["approval"]}),
    ],
)
def test_notify_takes_a_name_a_list_or_a_mapping(notify: object, expected: object) -> None:
    config = AgentConfig.model_validate({"system": "s", "notify": notify})

    assert config.notify == expected


def test_an_agent_notifying_console_needs_no_channels_yaml(tmp_path: Path) -> None:
    agent = tmp_path / "agents" / "digest"
    agent.mkdir(parents=True)
    (agent / "agent.yaml").write_text("system: Summarize the day.\nnotify: console\n")

    catalog = AgentCatalog(tmp_path / "agents")

    assert catalog.problems() == {}
    check_agent_notify("agent.yaml", {"console": ["approval"]}, ChannelsConfig())
    with pytest.raises(ConfigError, match="no channel named 'pager'"):
        check_agent_notify("agent.yaml", {"pager": ["approval"]}, ChannelsConfig())


def test_a_plugin_declaring_approval_only_refuses_other_events(tmp_path: Path) -> None:
    path = channels_yaml(
        tmp_path,
        {
            "queue": {
                "type": "python",
                "class": f"{PLUGIN}:PendingQueueChannel",
                "options": {"inbox": "q"},
            },
            "team-inbox": {
                "type": "python",
                "class": f"{PLUGIN}:InboxChannel",
                "options": {"inbox": "i"},
            },
        },
    )
    config = load_channels(path)

    check_agent_notify("agent.yaml", {"queue": ["approval"], "team-inbox": ["stuck"]}, config)
    with pytest.raises(ConfigError) as refused:
        check_agent_notify("agent.yaml", {"queue": ["approval", "stuck"]}, config)
    assert refused.value.field == "notify.queue"
    assert "only takes the 'approval' event" in refused.value.problem


def test_signoff_testing_imports_without_pytest() -> None:
    # The engine layer ships without pytest; a plug-in's checks must import there.
    code = (
        "import sys; sys.modules['pytest'] = None; sys.modules['_pytest'] = None\n"
        "from signoff.testing import CHANNEL_CHECKS, check_channel\n"
        "assert len(CHANNEL_CHECKS) == 7 and callable(check_channel)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)

    assert done.returncode == 0, done.stderr
