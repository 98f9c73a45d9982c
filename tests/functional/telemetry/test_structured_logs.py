"""One structured log: after a function's cold start every logger writes the service's JSON.

The root logger stands in for Lambda's runtime, which sets it to INFO and writes
what reaches it as lines of its own (without the correlation keys). The engine's
stdlib loggers and the libraries' come out through the Powertools handler, with
the correlation keys; the libraries' INFO lines (httpx names every URL it posts
to) come out nowhere.
"""

from __future__ import annotations

import io
import json
import logging
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.lambdas import import_handler

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.support.aws import AwsResources

SLACK_HOOK = "https://hooks.slack.com/services/T0000/B0000/hook-secret-XXXX"


class Logs:
    def __init__(self, structured: io.StringIO, runtime: io.StringIO) -> None:
        self._structured = structured
        self._runtime = runtime

    def structured(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self._structured.getvalue().splitlines() if line]

    def runtime(self) -> str:
        return self._runtime.getvalue()


@pytest.fixture
def logs(aws: AwsResources, monkeypatch: pytest.MonkeyPatch) -> Iterator[Logs]:
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("SIGNOFF_PUBLIC_URL", "https://api.example.com")
    root = logging.getLogger()
    runtime, level = io.StringIO(), root.level
    runtime_handler = logging.StreamHandler(runtime)
    root.addHandler(runtime_handler)
    root.setLevel(logging.INFO)
    function = import_handler("notifier")  # its cold start
    handler = function.logger.registered_handler
    structured = io.StringIO()
    stream = handler.setStream(structured)
    function.logger.append_keys(session_id="S-correlated")
    try:
        yield Logs(structured, runtime)
    finally:
        function.logger.remove_keys(["session_id"])
        handler.setStream(stream)
        root.removeHandler(runtime_handler)
        root.setLevel(level)


def test_the_engines_stdlib_loggers_write_the_services_json(logs: Logs) -> None:
    logging.getLogger("signoff.durable.turns").warning("the turn %s was re-driven", "T-1")

    (line,) = logs.structured()
    assert line["message"] == "the turn T-1 was re-driven"
    assert (line["service"], line["session_id"], line["level"]) == (
        "signoff",
        "S-correlated",
        "WARNING",
    )


def test_a_librarys_warning_is_the_services_json_with_the_correlation_keys(logs: Logs) -> None:
    logging.getLogger("botocore.credentials").warning("credentials expire soon")

    (line,) = logs.structured()
    assert line["message"] == "credentials expire soon"
    assert line["session_id"] == "S-correlated"
    assert line["name"] == "botocore.credentials"
    assert logs.runtime() == ""


def test_the_libraries_info_lines_name_no_url(logs: Logs) -> None:
    logging.getLogger("httpx").info('HTTP Request: POST %s "HTTP/1.1 200 OK"', SLACK_HOOK)
    logging.getLogger("botocore.endpoint").info("Sending http request: <AWSPreparedRequest>")
    logging.getLogger("urllib3.connectionpool").info("Starting new HTTPS connection")

    assert logs.structured() == []
    assert logs.runtime() == ""
