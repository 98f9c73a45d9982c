"""One settings object, read once at cold start: the functions on moto, their variables varied.

A variable with an invalid value fails the cold start with its name in the
message (it used to be parsed with a bare ``float`` or read as "not true"); a
variable changed after the cold start changes nothing until the next one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from signoff.errors import UsageError
from signoff.settings import Deployment
from tests.support.aws import free_port
from tests.support.lambdas import FakeLambdaContext, body, import_handler, load_event

if TYPE_CHECKING:
    from tests.support.aws import AwsResources

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def environment(aws: AwsResources, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The template's variables (from ``aws``) and the ones the tests' functions need."""
    monkeypatch.setenv("SIGNOFF_AGENTS_DIR", str(ROOT / "agents"))
    monkeypatch.setenv("SIGNOFF_ALLOW_ANONYMOUS", "true")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.delenv("SIGNOFF_MODEL", raising=False)
    return monkeypatch


INVALID = [
    ("SIGNOFF_RETENTION_DAYS", "thirty"),
    ("SIGNOFF_RETENTION_DAYS", "-1"),
    ("SIGNOFF_ALLOW_ANONYMOUS", "yes"),
    ("SIGNOFF_SWEEP_SHARDS", "0"),
]


@pytest.mark.parametrize(("variable", "value"), INVALID)
@pytest.mark.parametrize("function", ["message", "resolve", "sweep_worker"])
def test_an_invalid_variable_fails_the_cold_start_naming_it(
    environment: pytest.MonkeyPatch, function: str, variable: str, value: str
) -> None:
    environment.setenv(variable, value)

    with pytest.raises(UsageError, match=variable):
        import_handler(function)


@pytest.mark.parametrize(("variable", "value"), INVALID)
def test_the_planning_sweeper_fails_its_cold_start_on_what_it_reads_alone(
    environment: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    # It reads the sweep queue and the shard count (SweepPlanning), no other variable:
    # the functions that use the others fail on them (above).
    environment.setenv(variable, value)

    if variable == "SIGNOFF_SWEEP_SHARDS":
        with pytest.raises(UsageError, match=variable):
            import_handler("sweeper")
    else:
        environment.setenv("SIGNOFF_SWEEP_SHARDS", "3")
        planned = import_handler("sweeper").handler(
            load_event("sweeper_schedule"), FakeLambdaContext()
        )
        assert planned["planned"] == 1 + 4 * 3


def test_without_a_sweep_queue_the_sweeper_reads_every_variable(
    environment: pytest.MonkeyPatch,
) -> None:
    environment.delenv("SIGNOFF_SWEEP_QUEUE_URL")
    environment.setenv("SIGNOFF_RETENTION_DAYS", "thirty")

    with pytest.raises(UsageError, match="SIGNOFF_RETENTION_DAYS"):
        import_handler("sweeper")


@pytest.mark.parametrize(
    ("function", "variable"),
    [
        ("message", "SIGNOFF_NOTIFY_QUEUE_URL"),
        ("message", "SIGNOFF_CONTINUE_FUNCTION"),
        ("notifier", "SIGNOFF_TABLE"),
        ("sweep_worker", "SIGNOFF_TABLE"),
    ],
)
def test_a_missing_variable_fails_the_cold_start_naming_it(
    environment: pytest.MonkeyPatch, function: str, variable: str
) -> None:
    environment.setenv("SIGNOFF_CONTINUE_FUNCTION", "signoff-message")
    environment.delenv(variable)

    with pytest.raises(UsageError, match=f"{variable} is not set"):
        import_handler(function)


def test_the_planning_sweeper_needs_its_queue_and_nothing_of_the_store(
    environment: pytest.MonkeyPatch,
) -> None:
    # With its sweep queue the sweeper only plans: no table or bucket is read
    environment.delenv("SIGNOFF_TABLE")
    environment.delenv("SIGNOFF_BUCKET")
    sweeper = import_handler("sweeper")

    planned = sweeper.handler(load_event("sweeper_schedule"), FakeLambdaContext())

    assert planned["planned"] == 1 + 4 * Deployment.from_env().sweep_shards


def test_without_a_sweep_queue_the_sweeper_builds_the_whole_sweep_and_needs_the_store(
    environment: pytest.MonkeyPatch,
) -> None:
    environment.delenv("SIGNOFF_SWEEP_QUEUE_URL")
    environment.delenv("SIGNOFF_BUCKET")

    with pytest.raises(UsageError, match="SIGNOFF_BUCKET is not set"):
        import_handler("sweeper")


def test_the_settings_are_read_once_at_cold_start(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("SIGNOFF_CONTINUE_FUNCTION", "signoff-message")
    message, resolve = import_handler("message"), import_handler("resolve")
    # After the cold start the model override names a provider without a key:
    # a function that read it again now would fail its turn.
    environment.setenv("SIGNOFF_MODEL", "openai:gpt-4o-mini")
    # (and, should it be read, points at a closed port on loopback: never at a vendor)
    environment.setenv("SIGNOFF_MODEL_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")

    paused = message.handler(load_event("message_post"), FakeLambdaContext())
    config = resolve.handler(load_event("agent_config"), FakeLambdaContext())

    assert paused["statusCode"] == 202, paused["body"]
    assert config["statusCode"] == 200, config["body"]
    assert body(config)["model"]["provider"] == "scripted"


def test_the_settings_name_every_variable_they_read() -> None:
    settings = Deployment.from_env(
        {
            "SIGNOFF_TABLE": "t",
            "SIGNOFF_BUCKET": " b ",
            "SIGNOFF_NOTIFY_QUEUE_URL": "",  # a parameter left blank is unset
            "SIGNOFF_RETENTION_DAYS": "7",
            "SIGNOFF_ALLOW_ANONYMOUS": "TRUE",
            "SIGNOFF_RESUME_SIGNING_SECRET_ARN": "arn:aws:secretsmanager:r:1:secret:k",
            "SIGNOFF_HOME": "/home/me",  # another tool's variable: not the deployment's
            "OTHER": "x",
        }
    )

    assert (settings.table, settings.bucket, settings.notify_queue_url) == ("t", "b", None)
    assert settings.retention_seconds == 7 * 86400
    assert settings.allow_anonymous is True
    assert settings.allow_private_webhooks is False
    assert settings.secret_id("resume-signing") == "arn:aws:secretsmanager:r:1:secret:k"
    assert settings.secret_id("session-key") is None
    with pytest.raises(UsageError, match="SIGNOFF_NOTIFY_QUEUE_URL is not set"):
        settings.need("notify_queue_url")


def test_the_shard_counts_are_whole_numbers_of_one_or_more_twelve_and_four_by_default() -> None:
    defaults = Deployment.from_env({})
    assert (defaults.sweep_shards, defaults.listing_shards) == (12, 4)
    assert defaults.sweep_queue_url is None

    raised = Deployment.from_env(
        {
            "SIGNOFF_SWEEP_SHARDS": "48",
            "SIGNOFF_LISTING_SHARDS": "1",
            "SIGNOFF_SWEEP_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/1/sweep",
        }
    )
    assert (raised.sweep_shards, raised.listing_shards) == (48, 1)
    assert raised.sweep_queue_url == "https://sqs.us-east-1.amazonaws.com/1/sweep"

    for variable in ("SIGNOFF_SWEEP_SHARDS", "SIGNOFF_LISTING_SHARDS"):
        for value in ("0", "-3", "2.5", "twelve", "1_2", "1e1", "12.", "\u0661\u0662", "true"):
            with pytest.raises(UsageError, match=variable):
                Deployment.from_env({variable: value})
        # a Number parameter's value, as CloudFormation may pass it
        assert getattr(Deployment.from_env({variable: "+6.0"}), variable[8:].lower()) == 6
