"""One channel that cannot be built never silences the others (issue 12, "Isolation").

The deployment's channels are built one by one on first use (``ChannelSet``): a
channel whose client library is missing, whose secret is missing or whose
settings are refused fails only its own outbox rows — permanently, with the
reason recorded — while the other channels deliver once each; a secret source
that fails transiently leaves its row to be retried.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

import pytest

from signoff.agents import load_agent
from signoff.channels.build import BuildContext, ChannelSet
from signoff.channels.config import ChannelsConfig, ChannelSettings, SecretRef
from signoff.channels.memory import RecordingChannel
from signoff.channels.registry import CHANNEL_TYPES, ChannelType
from signoff.clock import ManualClock
from signoff.errors import SendFailed, StoreUnavailable
from signoff.keys.tokens import signer_from
from signoff.models.factory import build_model
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier
from signoff.queue.memory import MemoryQueue
from signoff.secrets.memory import MemorySecrets
from signoff.store.memory import MemoryStore
from tests.support.durable import StaticAgents, turns_over

if TYPE_CHECKING:
    from signoff.store.pending_records import OutboxRow, PendingItem

AGENTS = Path(__file__).resolve().parents[3] / "agents"
REFUND = "order A-1001 arrived broken, can you refund it?"
HERE = __name__  # the module as pytest imported it, so BUILT is this one
# Every Recorder built, by channel name: what the channel received.
BUILT: dict[str, Recorder] = {}


class RecorderSettings(ChannelSettings):
    """A test channel type; ``secret`` is read when the channel is built (as Slack's is)."""

    type: Literal["recorder"]
    secret: SecretRef | None = None
    mood: str = "fine"


class Recorder(RecordingChannel):
    """A recording channel built from ``channels.yaml`` like the real ones."""

    @classmethod
    def from_config(cls, settings: RecorderSettings, context: BuildContext, *, name: str) -> Self:
        if settings.secret is not None:
            context.secrets.get(settings.secret.secret)
        if settings.mood != "fine":
            raise ValueError(f"mood must be 'fine', not {settings.mood!r}")
        built = cls(name)
        BUILT[name] = built
        return built


class FlakySecrets(MemorySecrets):
    """A secret source that fails transiently ``times`` times, then answers."""

    def __init__(self, values: dict[str, str], times: int) -> None:
        super().__init__(values)
        self.times = times

    def get(self, name: str, *, fresh: bool = False) -> str:
        if self.times:
            self.times -= 1
            raise StoreUnavailable("throttled")
        return super().get(name, fresh=fresh)


@pytest.fixture(autouse=True)
def recorder_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        CHANNEL_TYPES,
        "recorder",
        ChannelType(channel=f"{HERE}:Recorder", settings=f"{HERE}:RecorderSettings"),
    )
    BUILT.clear()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(clock: ManualClock) -> MemoryStore:
    return MemoryStore(clock=clock)


def paused(store: MemoryStore, clock: ManualClock, channels: list[str]) -> PendingItem:
    """A refund paused for approval, notifying on ``channels``."""
    agent = load_agent(AGENTS / "customer-service")
    config = agent.config.model_copy(update={"notify": {name: ["approval"] for name in channels}})
    agent = type(agent)(**{**agent.__dict__, "config": config})
    agents = StaticAgents({agent.name: (agent, build_model(agent.config.model, agent.directory))})
    turns = turns_over(store, MemoryQueue(), agents, clock)
    result = turns.send("customer-service", REFUND, tenant="default", environment="production")
    assert result.pending is not None
    return result.pending


def hub(store: MemoryStore, clock: ManualClock, channels: dict[str, Any], secrets: Any) -> Notifier:
    config = ChannelsConfig.model_validate({"channels": channels})
    signer = signer_from(MemorySecrets({"resume-signing": "k" * 32}))
    return Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels=ChannelSet(config, BuildContext(secrets=secrets, clock=clock)),
        composer=lambda: Composer(signer=signer, public_url="https://api.example.com"),
        clock=clock,
        lock_ttl=30,
    )


def rows(store: MemoryStore, item: PendingItem) -> dict[str, OutboxRow]:
    return {row.channel: row for row in store.outbox.rows(item.id)}


def test_a_database_channel_without_its_library_fails_alone_and_says_what_to_install(
    store: MemoryStore,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # given psycopg cannot be imported (as in the deployed layer) and a database
    # channel configured beside two others
    monkeypatch.setitem(sys.modules, "psycopg", None)
    item = paused(store, clock, ["webhook", "email", "db"])
    notifier = hub(
        store,
        clock,
        {
            "webhook": {"type": "recorder"},
            "email": {"type": "recorder"},
            "db": {"type": "database", "dsn": {"secret": "db-dsn"}},
        },
        MemorySecrets({"db-dsn": "postgresql://u:p@db.internal/app"}),
    )

    # when the notification is delivered
    with caplog.at_level(logging.ERROR, logger="signoff.channels.build"):
        report = notifier.deliver(item.id)

    # then the two others got it once each, and the database row failed for good
    assert sorted(report.sent) == ["email", "webhook"]
    assert [len(BUILT[name].sent) for name in ("webhook", "email")] == [1, 1]
    assert list(report.failed) == ["db"]
    db = rows(store, item)["db"]
    assert db.failed and db.notified_at is None
    assert db.last_error is not None
    assert "psycopg" in db.last_error and "pip install 'signoff[database]'" in db.last_error
    assert all(rows(store, item)[name].notified_at is not None for name in ("webhook", "email"))
    # with one clear log line naming the channel, never the DSN
    [line] = [r for r in caplog.records if r.getMessage() == "channel cannot be built"]
    assert line.channel == "db" and line.channel_type == "database"  # type: ignore[attr-defined]
    assert "u:p@" not in caplog.text

    # and a second delivery sends nothing again and does not retry the failed row
    again = notifier.deliver(item.id)
    assert again.sent == [] and again.failed == {}
    assert [len(BUILT[name].sent) for name in ("webhook", "email")] == [1, 1]


def test_a_missing_secret_or_bad_settings_fail_only_their_own_rows_for_good(
    store: MemoryStore, clock: ManualClock
) -> None:
    item = paused(store, clock, ["ok", "no-secret", "moody"])
    notifier = hub(
        store,
        clock,
        {
            "ok": {"type": "recorder"},
            "no-secret": {"type": "recorder", "secret": {"secret": "absent"}},
            "moody": {"type": "recorder", "mood": "grumpy"},
        },
        MemorySecrets(),
    )

    report = notifier.deliver(item.id)

    assert report.sent == ["ok"] and len(BUILT["ok"].sent) == 1
    assert sorted(report.failed) == ["moody", "no-secret"]
    found = rows(store, item)
    assert found["no-secret"].failed
    assert "secret 'absent' is missing" in (found["no-secret"].last_error or "")
    assert found["moody"].failed
    assert "bad settings: mood must be 'fine'" in (found["moody"].last_error or "")


def test_a_transient_secret_failure_is_retried_and_the_others_are_not_resent(
    store: MemoryStore, clock: ManualClock
) -> None:
    item = paused(store, clock, ["ok", "chat"])
    notifier = hub(
        store,
        clock,
        {"ok": {"type": "recorder"}, "chat": {"type": "recorder", "secret": {"secret": "token"}}},
        FlakySecrets({"token": "xoxb-1"}, times=1),
    )

    # the secret source is throttled once: the chat row is released for a retry
    with pytest.raises(SendFailed) as failed:
        notifier.deliver(item.id)
    assert failed.value.retryable and "chat" in str(failed.value)
    chat = rows(store, item)["chat"]
    assert not chat.failed and chat.notified_at is None and chat.lock_owner is None
    assert len(BUILT["ok"].sent) == 1

    # the retry builds the channel and sends it; the other is not sent again
    report = notifier.deliver(item.id)
    assert report.sent == ["chat"] and len(BUILT["chat"].sent) == 1
    assert len(BUILT["ok"].sent) == 1


def test_each_channel_is_built_once_however_many_rows_use_it(
    store: MemoryStore, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    config = ChannelsConfig.model_validate(
        {
            "channels": {
                "ok": {"type": "recorder"},
                "db": {"type": "database", "dsn": {"secret": "d"}},
            }
        }
    )
    channels = ChannelSet(config, BuildContext(secrets=MemorySecrets(), clock=clock))

    assert channels["ok"] is channels["ok"]
    with pytest.raises(SendFailed) as first:
        channels["db"]
    with pytest.raises(SendFailed) as second:
        channels["db"]
    assert first.value is second.value and not first.value.retryable
    assert sorted(channels) == ["db", "ok"] and "db" in channels
    with pytest.raises(KeyError):
        channels["nowhere"]
