"""The built functions under AWS's own runtime interface client, as Lambda runs them.

``test_built_handlers.py`` imports each built handler with a driver of ours. Here the
python3.13 stand-in runs ``python -m awslambdaric <Handler>`` — the runtime's own
bootstrap, from ``.venv-lambda-ric`` (``make packaging``), after the function's code
and layers on ``sys.path`` as ``/var/runtime`` is in Lambda — against
``runtime_api.RuntimeApi``, a stand-in of the Runtime API that serves each event and
collects what the client posts back, and a moto server for AWS. So the handler's
signature, its JSON-serialisable answers, the context the client builds (deadline,
request id, ARN) and the log handling the client installs are Lambda's, not ours.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from tests.packaging.runtime_api import Outcome, RuntimeApi
from tests.packaging.test_built_handlers import (
    LAMBDA_PYTHON,
    ROOT,
    BuiltFunction,
    body,
    built_function,
    owner,
    process_environment,
    refund_results,
)
from tests.packaging.test_built_handlers import built as built
from tests.packaging.test_built_handlers import lambda_env as lambda_env
from tests.support.aws import moto_server as moto_server
from tests.support.lambdas import load_event

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

RIC = ROOT / ".venv-lambda-ric"
SENDER = "signoff@example.com"  # agents/channels.yaml's local-email channel

pytestmark = pytest.mark.slow


@pytest.fixture
def ric(built: None) -> Path:
    if not (RIC / ".installed").exists():
        message = f"{RIC.name} missing: `make packaging` installs awslambdaric there"
        if os.environ.get("CI", "").lower() not in {"", "0", "false", "no"}:
            pytest.fail(message)
        pytest.skip(message)
    return RIC


@contextlib.contextmanager
def sandbox(function: BuiltFunction, env: dict[str, str], ric: Path) -> Iterator[RuntimeApi]:
    """One sandbox of ``function``: awslambdaric in a fresh process, polling its Runtime API."""
    arn = f"arn:aws:lambda:us-east-1:123456789012:function:signoff-test-{function.logical_id}"
    with RuntimeApi(arn) as api:
        process_env = process_environment(function, env)
        process_env["PYTHONPATH"] += os.pathsep + str(ric)
        process_env["AWS_LAMBDA_RUNTIME_API"] = api.address
        process = subprocess.Popen(
            [str(LAMBDA_PYTHON), "-s", "-B", "-P", "-m", "awslambdaric", function.handler],
            env=process_env,
            cwd=function.code,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            yield api
        finally:
            process.terminate()
            _, logs = process.communicate(timeout=30)
            # awslambdaric posts a failed import; its stderr tells why.
            if process.returncode not in (0, -15):
                print(logs[-6000:])


def answered(outcome: Outcome, function: BuiltFunction) -> Any:
    assert outcome.kind == "response", (
        f"{function.logical_id} under awslambdaric posted {outcome.kind}"
        f" {outcome.error_type}: {outcome.body}"
    )
    return outcome.body


def test_an_approval_turn_runs_through_the_runtime_interface_client(
    lambda_env: dict[str, str], ric: Path
) -> None:
    # Given the email channel's sender verified with SES (moto refuses mail from others)
    boto3.client("ses", region_name="us-east-1").verify_email_identity(EmailAddress=SENDER)
    from moto.ses.models import ses_backends

    mails = ses_backends["123456789012"]["us-east-1"].sent_messages
    # When the refund request reaches the message function's sandbox through its Runtime API
    request = load_event("message_post")
    message = owner(request)
    with sandbox(message, lambda_env, ric) as api:
        paused = answered(api.invoke(request, timeout=message.timeout), message)
    # Then the client posted the handler's API Gateway answer: paused for issue_refund
    assert paused["statusCode"] == 202, paused
    pending = body(paused)
    assert pending["pending"] is True and pending["tool"] == "issue_refund"
    ids = {"PENDING_ID": pending["id"], "SESSION_ID": pending["sessionId"]}

    # When the notify queue's batch for that pause reaches the notifier's sandbox
    batch = load_event("notifier_sqs_batch", **ids)
    notifier = owner(batch)
    with sandbox(notifier, lambda_env, ric) as api:
        notified = answered(api.invoke(batch, timeout=notifier.timeout), notifier)
    # Then it answered as an SQS partial-batch function does, nothing to retry, and the
    # approval mail went out
    assert notified == {"batchItemFailures": []}, notified
    assert [mail.source for mail in mails] == [SENDER]
    assert "A-1001" in str(mails[0].body)

    # When the approval, then the session's status, reach one warm resolve sandbox
    approve = load_event("approval_approve", **ids)
    status = load_event("session_status", **ids)
    resolve = owner(approve)
    assert owner(status) == resolve
    with sandbox(resolve, lambda_env, ric) as api:
        done = answered(api.invoke(approve, timeout=resolve.timeout), resolve)
        read = answered(api.invoke(status, timeout=resolve.timeout), resolve)
    # Then the turn finished with the refund approved, and the status tells it
    assert done["statusCode"] == 200, done
    assert refund_results(body(done)["events"]) == ["Approved."]
    assert read["statusCode"] == 200, read
    assert body(read)["status"] == "done", body(read)
    assert body(read)["decisions"][0]["decision"] == "approved"


def test_a_handler_error_is_posted_to_the_runtime_api_as_lambda_reports_it(
    lambda_env: dict[str, str], ric: Path
) -> None:
    # Given the notifier's built function, and a record that is no SQS batch at all
    notifier = built_function("NotifierFunction")
    with sandbox(notifier, lambda_env, ric) as api:
        # When the client hands it to the handler
        outcome = api.invoke({"Records": "not a list"}, timeout=notifier.timeout)
    # Then awslambdaric posted an invocation error, with the type and trace Lambda logs
    assert outcome.kind == "error", outcome
    assert outcome.body["errorType"] == "TypeError", outcome.body
    assert any("handle_batch" in line for line in outcome.body["stackTrace"]), outcome.body
