"""``signoff dev --schedules``: the template's agent schedules run on a period locally, each
run invoking the message function with the schedule's ``Input``, as EventBridge would.

Each test starts a stack of its own (a short period keeps them fast).
"""

from __future__ import annotations

import io
import json
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from signoff_dev.local.stack import LocalStack, StackSettings
from signoff_dev.local.template import find_template, load_template
from tests.support.local_stack import eventually

ROOT = find_template().parent
RULE = "signoff-MessageFunctionDailyDigestSchedule"
# The template's sample schedule as the stack lists it: its State is a condition.
LISTED = "DailyDigestSchedule cron(0 18 * * ? *) (deployed if SampleSchedulesEnabled)"
RAN = re.compile(rf"schedule {RULE} ran, its Input (\{{.*\}}) as the event: (\{{.*\}})")


def json_of(text: str) -> dict[str, object]:
    value = json.loads(text)
    assert isinstance(value, dict)
    return value


def test_with_schedules_on_the_daily_digest_runs_and_its_session_is_recorded() -> None:
    console = io.StringIO()
    settings = StackSettings(
        port=0, console=console, logs=io.StringIO(), schedules=True, schedule_every=0.5
    )
    with LocalStack(settings) as stack:
        [digest] = [s for s in stack.schedules if s.input_event is not None]
        assert digest.rule == RULE and digest.period == 0.5

        ran = eventually(lambda: RAN.search(console.getvalue()), "a run of the daily digest")
        given, result = (json_of(ran.group(1)), json_of(ran.group(2)))

        # the function got the template's Input as its event, unchanged
        props = load_template()["Resources"]["MessageFunction"]["Properties"]
        assert given == json_of(props["Events"]["DailyDigestSchedule"]["Properties"]["Input"])
        assert result["status"] == "finished"
        # and the run left its session, done, as the Input's tenant
        status = httpx.get(f"{stack.url}/agents/daily-digest/sessions/{result['sessionId']}")
        assert status.status_code == 200 and status.json()["status"] == "done"


def test_without_schedules_the_agent_schedule_is_listed_not_run() -> None:
    console = io.StringIO()
    with LocalStack(StackSettings(port=0, console=console, logs=io.StringIO())) as stack:
        assert all(s.input_event is None for s in stack.schedules)
        assert stack.agent_schedules == [LISTED]
        time.sleep(1.0)
    assert "schedule " + RULE not in console.getvalue()


@pytest.mark.slow
def test_signoff_dev_says_schedules_are_on_and_runs_them() -> None:
    code = "import sys; from signoff_dev.cli import main; sys.exit(main(sys.argv[1:]))"
    args = ["dev", "--port", "0", "--schedules", "--schedule-every", "0.5"]
    with subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as dev:
        assert dev.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(RAN.search(line) for line in lines):
            line = dev.stdout.readline()
            if not line:
                break
            lines.append(line)
        dev.send_signal(signal.SIGINT)
        rest, _ = dev.communicate(timeout=30)
    output = "".join(lines) + rest
    assert dev.returncode == 0, output
    assert f"{LISTED}: runs every 0.5 s" in output
    assert "schedules on (--schedules)" in output
    assert any(RAN.search(line) for line in lines), output
