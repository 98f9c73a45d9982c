"""Nothing secret in telemetry: a whole flow's traces, logs and metrics, recorded in-process.

The handlers run as Lambda runs them — tracing on (X-Ray recorder with an
in-memory emitter instead of the daemon's UDP socket), Powertools logs and
metrics — through message → pause → notify (webhook + email) → link GET →
link POST → done. Then nothing any of them produced may contain a resume
token or its signature, a link, the signing or channel secrets, a tool
argument's value or the message's text.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import boto3
import pytest
import yaml
from aws_lambda_powertools import Tracer
from aws_xray_sdk import global_sdk_config
from aws_xray_sdk.core import xray_recorder
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from signoff.continuations.memory import MemoryContinuations
from signoff.telemetry import LIBRARIES
from tests.conftest import ROOT
from tests.support.http_server import RecordingServer, Reply
from tests.support.lambdas import FakeLambdaContext, body, import_handler, load_event, queued_batch

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from types import ModuleType

    from tests.support.aws import AwsResources

WEBHOOK_KEY = "whsec_" + "Q2hhbm5lbFNlY3JldFZhbHVlMDEyMzQ1"
MESSAGE = "order A-1001 arrived broken, can you refund it?"
TOKEN = re.compile(r"v1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{20,}")


class RecordingEmitter:
    """The X-Ray daemon's stand-in: keeps every entity the recorder would send."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send_entity(self, entity: Any) -> None:
        self.sent.append(entity.serialize())

    def set_daemon_address(self, address: str | None) -> None:
        """Nothing to aim at: the entities stay in memory."""


class RecordingHandler(logging.Handler):
    """Every log record, as text: message, extras and appended keys, and any traceback."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = [record.getMessage(), repr(vars(record))]
        if record.exc_info:
            text.append(logging.Formatter().formatException(record.exc_info))
        self.records.append("\n".join(text))


@dataclass
class Traced:
    message: ModuleType
    resolve: ModuleType
    notifier: ModuleType
    webhook: RecordingServer
    emitter: RecordingEmitter
    logs: RecordingHandler
    invocations: list[str] = field(default_factory=list)

    def invoke(self, function: ModuleType, event: dict[str, Any]) -> Any:
        """One invocation inside its own segment, as Lambda's facade segment would hold it."""
        xray_recorder.begin_segment(f"signoff-{function.__name__}")
        try:
            return function.handler(event, FakeLambdaContext())
        finally:
            xray_recorder.end_segment()
            self.invocations.append(function.__name__)


@pytest.fixture
def traced(aws: AwsResources, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Traced]:
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    with RecordingServer() as webhook:
        channels = {
            "hooks": {
                "type": "webhook",
                "url": f"{webhook.url}/hook",
                "secret": {"secret": "hooks-key"},
                "allowPrivate": True,
            },
            "mail": {"type": "email", "to": ["ops@example.com"], "from": "signoff@example.com"},
        }
        (agents / "channels.yaml").write_text(yaml.safe_dump({"channels": channels}))
        config = yaml.safe_load((agents / "customer-service" / "agent.yaml").read_text())
        config["notify"] = {name: ["approval"] for name in channels}
        (agents / "customer-service" / "agent.yaml").write_text(yaml.safe_dump(config))
        boto3.client("secretsmanager").create_secret(
            Name="signoff/hooks-key", SecretString=WEBHOOK_KEY
        )
        boto3.client("sesv2").create_email_identity(EmailIdentity="signoff@example.com")
        for name, value in {
            "SIGNOFF_AGENTS_DIR": str(agents),
            "SIGNOFF_ENVIRONMENT": "production",
            "SIGNOFF_ALLOW_ANONYMOUS": "true",
            "SIGNOFF_PUBLIC_URL": "https://api.example.com",
            "SIGNOFF_CHANNEL_SECRETS_PREFIX": "signoff/",
            # What makes Powertools trace: a Lambda environment, tracing not disabled.
            "LAMBDA_TASK_ROOT": str(ROOT),
            "POWERTOOLS_SERVICE_NAME": "signoff",
        }.items():
            monkeypatch.setenv(name, value)
        for name in ("POWERTOOLS_TRACE_DISABLED", "AWS_SAM_LOCAL", "AWS_XRAY_SDK_ENABLED"):
            monkeypatch.delenv(name, raising=False)

        # Tracer keeps its config class-wide, and an earlier disabled Tracer turned
        # the X-Ray SDK off for the process: start clean, put everything back after.
        was_enabled = global_sdk_config.sdk_enabled()
        saved = (
            xray_recorder.emitter,
            xray_recorder.sampling,
            xray_recorder.context.context_missing,
        )
        Tracer._reset_config()
        global_sdk_config.set_sdk_enabled(True)
        emitter = RecordingEmitter()
        # Every trace sampled; threads without a segment (the notifier's pool) are skipped.
        xray_recorder.configure(emitter=emitter, sampling=False, context_missing="IGNORE_ERROR")
        logs = RecordingHandler()
        # The libraries' loggers write through the service's handler, not the root's.
        libraries = [logging.getLogger(name) for name in LIBRARIES]
        watched = [logging.getLogger(), logging.getLogger("signoff"), *libraries]
        levels = [logger.level for logger in watched]
        for logger in watched:
            logger.addHandler(logs)
        logging.getLogger("signoff").setLevel(logging.DEBUG)
        try:
            message, resolve, notifier = (
                import_handler(f) for f in ("message", "resolve", "notifier")
            )
            continuations = MemoryContinuations()
            for module in (message, resolve):
                module.API = dataclasses.replace(module.API, continuations=continuations)
            yield Traced(message, resolve, notifier, webhook, emitter, logs)
        finally:
            for logger, level in zip(watched, levels, strict=True):
                logger.removeHandler(logs)
                logger.setLevel(level)
            emitter_before, sampling_before, missing_before = saved
            xray_recorder.configure(
                emitter=emitter_before, sampling=sampling_before, context_missing=missing_before
            )
            Tracer._reset_config()
            global_sdk_config.set_sdk_enabled(was_enabled)


def argument_values(args: dict[str, Any]) -> set[str]:
    """How an argument value would show in a leak: quoted, as JSON or a repr writes it,
    and bare when it is distinctive (a bare ``42.0`` also matches a timestamp's digits)."""
    shown = set()
    for value in args.values():
        text = str(value)
        shown |= {f'"{text}"', f"'{text}'"}
        if len(text) >= 5 and not text.replace(".", "").isdigit():
            shown.add(text)
    return shown


def test_a_whole_flow_leaves_no_secret_in_traces_logs_or_metrics(
    traced: Traced, aws: AwsResources, capsys: pytest.CaptureFixture[str]
) -> None:
    traced.webhook.script([Reply(status=204)] * 3)
    # message → pause
    paused = traced.invoke(traced.message, load_event("message_post"))
    assert paused["statusCode"] == 202, paused["body"]
    pending_id = body(paused)["id"]
    args = traced.message.API.pending.get(pending_id).args
    # pause → notify (webhook and email, each with its links)
    report = traced.invoke(traced.notifier, queued_batch(aws))
    assert report["batchItemFailures"] == []
    hooks = [r.text() for r in traced.webhook.requests]
    mail = [repr(vars(m)) for m in ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages]
    assert len(hooks) == 1 and len(mail) == 1
    link = json.loads(hooks[0])["linkUrl"]
    token = link.rsplit("/a/", 1)[1]
    # link GET shows the page, link POST decides, the turn ends
    page = traced.invoke(traced.resolve, load_event("link_get", TOKEN=token))
    assert page["statusCode"] == 200 and token in page["body"]
    posted = traced.invoke(traced.resolve, load_event("link_post", TOKEN=token))
    assert posted["statusCode"] == 200, posted["body"]
    for session_id in traced.message.API.continuations.drain():
        traced.invoke(traced.message, load_event("continue_turn", SESSION_ID=session_id))
    item = traced.resolve.API.pending.get(pending_id)
    assert item.status == "approved"
    status = traced.invoke(
        traced.resolve, load_event("session_status", SESSION_ID=body(paused)["sessionId"])
    )
    assert body(status)["status"] == "done"

    tokens = set(TOKEN.findall("\n".join([*hooks, *mail, page["body"]])))
    assert token in tokens
    signing = boto3.client("secretsmanager").get_secret_value(
        SecretId=aws.environment["SIGNOFF_RESUME_SIGNING_SECRET_ARN"]
    )["SecretString"]
    forbidden = {
        *tokens,
        # each token's payload and signature alone
        *(part for t in tokens for part in t.split(".")[2:]),
        "/a/",
        signing,
        WEBHOOK_KEY,
        MESSAGE,
        "arrived broken",
        *argument_values(args),
        "Refunded",  # the model's answer
    }

    # The recording saw the flow: a handler subsegment per invocation, AWS calls, logs.
    captured = capsys.readouterr()
    segments = "\n".join(traced.emitter.sent)
    assert segments.count('"## handler"') >= len(traced.invocations) == 5
    assert '"name": "dynamodb"' in segments and '"ColdStart"' in segments
    assert traced.logs.records, "the handlers log (correlation ids, outcomes)"
    assert "TurnsPaused" in captured.out, "the metrics were flushed to stdout"

    everything = {
        "trace segments": segments,
        "log records": "\n".join(traced.logs.records),
        "stdout (logs and metrics)": captured.out,
        "stderr": captured.err,
    }
    leaks = {
        (where, value)
        for where, text in everything.items()
        for value in forbidden
        if value and value in text
    }
    assert not leaks, sorted(leaks)
